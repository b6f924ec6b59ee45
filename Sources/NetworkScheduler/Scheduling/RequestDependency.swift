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
public protocol RequestDependency: AnyObject {}

extension RequestHandle: RequestDependency {}
extension Operation: RequestDependency {}

/// What one entry of `after:` is, read once as the request enters its scheduler.
enum Prerequisite {
    /// Another request: its outcome, and its priority inherited while the dependent waits.
    case request(RequestHandle)
    /// An `Operation`, watched until it finishes.
    case operation(Operation)
    /// A type of the app's that conforms: the dependent fails as an invalid request, naming it.
    case unsupported(String)

    init(_ dependency: any RequestDependency) {
        switch dependency {
        case let handle as RequestHandle: self = .request(handle)
        case let operation as Operation: self = .operation(operation)
        default: self = .unsupported(String(describing: type(of: dependency)))
        }
    }

    /// The request it is, if it is one.
    var request: RequestHandle? {
        if case .request(let handle) = self { return handle }
        return nil
    }
}
