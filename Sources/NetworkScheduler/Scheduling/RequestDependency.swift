import Foundation

/// Something a request can wait for in `after:`: another request (its ``RequestHandle``), or
/// any `Operation`: the app's own, or a request's (``APIClient/operation(for:priority:group:after:completion:)``).
///
/// ```swift
/// let login = auth.send(.login(credentials)) { result in … }
/// let migration = DatabaseMigration()          // an Operation of the app's
/// appQueue.addOperation(migration)
/// api.send(.sync, after: [login, migration]) { result in … }
/// ```
///
/// A request waits for an `Operation` inside its scheduler, not as an operation in a queue: it
/// starts once the operation has finished, and ends with
/// ``ServiceError/dependencyFailed(cause:dependency:)`` (its cause ``ServiceError/cancelled``)
/// if the operation was cancelled. An operation that never finishes holds its dependents until
/// their deadline (``Resource/within(_:)``), their cancellation, or their group's.
///
/// A type of yours can stand for one of these (a task object that holds a request's handle):
/// it conforms by naming the work it stands for, which only the library's types make, so
/// every dependency is one the scheduler can wait for.
///
/// ```swift
/// final class ProfileLoad: RequestDependency {
///     let handle: RequestHandle
///     var awaitedWork: AwaitedWork { handle.awaitedWork }
/// }
/// ```
public protocol RequestDependency: AnyObject {
    /// The request or operation a dependent waits for.
    var awaitedWork: AwaitedWork { get }
}

/// A request or an `Operation` that a dependent waits for: made only by ``RequestHandle`` and
/// `Operation`, read once as the dependent enters its scheduler.
public struct AwaitedWork {
    enum Work {
        /// Another request: its outcome, and its priority inherited while the dependent waits.
        case request(RequestHandle)
        /// An `Operation`, watched until it finishes.
        case operation(Operation)
    }

    let work: Work

    /// The request it is, if it is one.
    var request: RequestHandle? {
        if case .request(let handle) = work { return handle }
        return nil
    }
}

extension RequestHandle: RequestDependency {
    /// This request.
    public var awaitedWork: AwaitedWork { AwaitedWork(work: .request(self)) }
}

extension Operation: RequestDependency {
    /// This operation, until it finishes.
    public var awaitedWork: AwaitedWork { AwaitedWork(work: .operation(self)) }
}
