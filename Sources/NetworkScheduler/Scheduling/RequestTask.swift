/// A request that others can wait for: a ``RequestHandle``, or a ``RequestTask`` (whose
/// handle it is). Pass either to `after:`.
public protocol RequestDependency: Sendable {
    /// The caller that must succeed first.
    var handle: RequestHandle { get }
}

extension RequestHandle: RequestDependency {
    /// The handle itself.
    public var handle: RequestHandle { self }
}

/// A request sent from async code, whose model you await when you need it, and which other
/// requests can wait for: the async form of a handle.
///
/// ```swift
/// let login = api.task(for: .login(credentials), priority: .critical)
/// let profile = api.task(for: .me, priority: .high, after: [login]) // sent once the login succeeds
/// let session = try await login.value
/// let me = try await profile.value
/// ```
///
/// Like a Swift `Task`, it runs whether or not anyone awaits it, and awaiting it from a task
/// that is cancelled does not cancel it: call ``cancel()``, or cancel its group.
public final class RequestTask<Model: Sendable>: RequestDependency {
    /// The request's caller: for `after:`, ``RequestHandle/priority``, and its ID in events.
    public let handle: RequestHandle
    private let result: Promise<Result<Reply<Model>, ServiceError>>

    init(handle: RequestHandle, result: Promise<Result<Reply<Model>, ServiceError>>) {
        self.handle = handle
        self.result = result
    }

    /// The model, once the request has ended; throws its error, or
    /// ``ServiceError/cancelled`` if it was cancelled.
    public var value: Model {
        get async throws(ServiceError) { try await result.value.get().value }
    }

    /// The model with the response's status, headers, timing, and whether it was shared.
    public var reply: Reply<Model> {
        get async throws(ServiceError) { try await result.value.get() }
    }

    /// Ends this caller with ``ServiceError/cancelled``, unless it has already ended; a call
    /// it shares with other callers goes on for them.
    public func cancel() {
        handle.cancel()
    }
}

/// A value that arrives once, for any number of awaiting tasks.
final class Promise<Value: Sendable>: Sendable {
    private enum State {
        case waiting([CheckedContinuation<Value, Never>])
        case fulfilled(Value)
    }

    private let state = Locked(State.waiting([]))

    /// Hands `value` to every task awaiting it, and to those that await it later. A second
    /// call is ignored.
    func fulfill(_ value: Value) {
        let waiting: [CheckedContinuation<Value, Never>] = state.withLock { state in
            guard case .waiting(let continuations) = state else { return [] }
            state = .fulfilled(value)
            return continuations
        }
        for continuation in waiting { continuation.resume(returning: value) }
    }

    /// The value, once it has arrived.
    var value: Value {
        get async {
            await withCheckedContinuation { continuation in
                let value: Value? = state.withLock { state in
                    switch state {
                    case .waiting(let continuations):
                        state = .waiting(continuations + [continuation])
                        return nil
                    case .fulfilled(let value):
                        return value
                    }
                }
                if let value { continuation.resume(returning: value) }
            }
        }
    }
}
