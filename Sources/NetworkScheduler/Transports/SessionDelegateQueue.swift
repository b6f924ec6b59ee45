#if canImport(FoundationNetworking)
import Dispatch
import Foundation

/// The delegate queue of a transport's session on Linux: an `OperationQueue` whose closures run
/// in order on one serial dispatch queue, without an `Operation` each.
///
/// FoundationNetworking hands every delegate callback to its session's delegate queue as a
/// closure (`addOperation(_:)`), one for each 16 KiB of a body. Through `OperationQueue`'s own
/// machinery each is an operation made, scheduled, started and observed to its end, which cost
/// a large download more than writing its chunks (Benchmarks/RUNS.md, the forty-seventh run).
/// Here a closure is one `async`, in the order it came. An `Operation` added to it still goes through that machinery, onto the same
/// serial queue, so that its dependencies are kept.
///
/// It cannot be suspended (`isSuspended` holds back only operations, not the closures the
/// session adds).
final class SessionDelegateQueue: OperationQueue, @unchecked Sendable {
    // Safety: its one stored property is a dispatch queue, set once.
    /// Where everything added to it runs.
    let serial = DispatchQueue(label: "NetworkScheduler.URLSession.delegate")

    override init() {
        super.init()
        name = serial.label
        maxConcurrentOperationCount = 1
        underlyingQueue = serial
    }

    override func addOperation(_ block: @escaping @Sendable () -> Void) {
        serial.async(execute: block)
    }

    /// Waits for the operations, then for the closures added before this call.
    override func waitUntilAllOperationsAreFinished() {
        super.waitUntilAllOperationsAreFinished()
        serial.sync {}
    }
}
#endif
