import Foundation

/// The sink of an attempt whose body stays with the transport, in memory, but whose answer's
/// head the scheduler wants as soon as it arrives: a host's probe, whose head says whether the
/// host is healthy while its body may take minutes. It takes no body.
final class HeadWatch: ResponseBodySink {
    private let onHead: @Sendable (ResponseHead) -> Void

    init(_ onHead: @escaping @Sendable (ResponseHead) -> Void) {
        self.onHead = onHead
    }

    func accept(_ head: ResponseHead) throws -> Bool {
        onHead(head)
        return false
    }

    func write(_ chunk: Data) throws {}
}
