/// How much of a request's body has gone out: what an upload's progress bar shows.
///
/// A caller gets it through `progress:` (``APIClient/send(_:priority:group:after:progress:completion:)``)
/// or ``RequestHandle/progress``. A call shared by several callers reports its progress to each.
/// A retried call starts again from zero.
///
/// ```swift
/// api.send(.avatar(form), priority: .low, progress: { progress in
///     bar.value = progress.fractionSent ?? 0
/// }) { result in … }
/// ```
public struct TransferProgress: Sendable, Equatable {
    /// The bytes of the body sent so far in this attempt.
    public var bytesSent: Int64
    /// The bytes of the whole body, or nil when the transport does not know.
    public var bytesExpectedToSend: Int64?

    /// A progress of `bytesSent` out of `bytesExpectedToSend`.
    ///
    /// - Parameters:
    ///   - bytesSent: the bytes sent so far.
    ///   - bytesExpectedToSend: the bytes of the whole body, or nil if unknown.
    public init(bytesSent: Int64, bytesExpectedToSend: Int64?) {
        self.bytesSent = bytesSent
        self.bytesExpectedToSend = bytesExpectedToSend.flatMap { $0 >= 0 ? $0 : nil }
    }

    /// The part of the body sent, from 0 to 1; nil when its size is not known.
    public var fractionSent: Double? {
        guard let expected = bytesExpectedToSend else { return nil }
        guard expected > 0 else { return 1 }
        return min(1, Double(max(0, bytesSent)) / Double(expected))
    }

    /// Whether the whole body has gone out.
    public var isSent: Bool {
        bytesExpectedToSend.map { bytesSent >= $0 } ?? false
    }
}
