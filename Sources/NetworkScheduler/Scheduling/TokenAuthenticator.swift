import Dispatch
import Foundation

/// Keeps a bearer token and refreshes it once for everyone when the server rejects it.
///
/// When many requests get `401 Unauthorized` at once, one refresh runs and the others wait for
/// it; each request is then replayed once with the new token. If the refresh fails, every one of
/// them fails with ``ServiceError/authenticationFailed(cause:)``, whose cause is the app's own
/// error (``ServiceError/underlying(_:)``), and so does every request rejected later with the
/// same token, at once, until the token changes (set it after the user signs in again): one
/// wave of rejections refreshes once, however it fails. A request rejected again after its
/// replay ends with the 401: there is no loop.
///
/// A refresh has a deadline, `timeout`: one that has not returned by then fails as
/// ``ServiceError/timedOut`` for everyone waiting, and is cancelled. A request waits for it no
/// longer than its own timeout, after which it fails as
/// ``ServiceError/authenticationFailed(cause:)`` with ``ServiceError/timedOut``, and the refresh
/// goes on for the others.
///
/// ```swift
/// let authenticator = TokenAuthenticator { rejected in
///     try await auth.value(for: .refresh(refreshToken)).accessToken
/// }
/// let api = APIClient(baseURL: apiURL, scheduler: scheduler, authenticator: authenticator)
/// ```
public final class TokenAuthenticator: Sendable {
    private typealias Waiter = CheckedContinuation<String, any Error>

    /// The refresh in flight: its number, so that a late result of an older one is ignored,
    /// and who waits for it.
    private struct Refresh {
        let number: Int
        let rejected: String?
        /// By the number each got, so that one whose own deadline passed can leave.
        var waiters: [Int: Waiter]
        var task: Task<Void, Never>?
    }

    private struct State {
        var token: String?
        var refreshing: Refresh?
        /// The last refresh's failure, and the token it was to replace.
        var failure: (rejected: String?, error: ServiceError)?
        var lastNumber = 0
        var lastWaiter = 0
    }

    private let state: Locked<State>
    private let refresh: @Sendable (_ rejectedToken: String?) async throws -> String
    /// The most seconds a refresh may take.
    public let timeout: TimeInterval

    /// - Parameters:
    ///   - token: the token to start with, if the app already has one.
    ///   - timeout: the most seconds a refresh may take; 30 by default.
    ///   - refresh: gets a new token; given the token the server rejected. Send it through a
    ///     client without this authenticator, so that its own 401 cannot start another refresh.
    public init(
        token: String? = nil,
        timeout: TimeInterval = 30,
        refresh: @escaping @Sendable (_ rejectedToken: String?) async throws -> String
    ) {
        state = Locked(State(token: token))
        self.timeout = timeout
        self.refresh = refresh
    }

    /// The current token. Setting it (after a sign-in) also forgets a failed refresh.
    public var token: String? {
        get { state.withLock { $0.token } }
        set {
            state.withLock { state in
                state.token = newValue
                state.failure = nil
            }
        }
    }

    /// A token newer than `rejected`: the current one if someone already refreshed, the
    /// failure of the refresh that was to replace `rejected` if it failed, else the result of
    /// the one refresh in flight, started here if need be; or ``ServiceError/timedOut`` after
    /// `patience` seconds (the asking request's timeout), if that comes before the refresh's
    /// own deadline.
    func token(replacing rejected: String?, within patience: TimeInterval? = nil) async throws(ServiceError) -> String {
        do {
            return try await withCheckedThrowingContinuation { (waiter: Waiter) in
                enum Next {
                    case ready(String)
                    case failed(ServiceError)
                    case waiting
                    case start(Int)
                }
                var waiterID = 0
                let next: Next = state.withLock { state in
                    if let current = state.token, current != rejected { return .ready(current) }
                    if let failure = state.failure, failure.rejected == rejected { return .failed(failure.error) }
                    state.lastWaiter += 1
                    waiterID = state.lastWaiter
                    if state.refreshing != nil {
                        state.refreshing?.waiters[waiterID] = waiter
                        return .waiting
                    }
                    state.lastNumber += 1
                    state.refreshing = Refresh(number: state.lastNumber, rejected: rejected, waiters: [waiterID: waiter])
                    return .start(state.lastNumber)
                }
                switch next {
                case .ready(let token): return waiter.resume(returning: token)
                case .failed(let error): return waiter.resume(throwing: error)
                case .waiting: break
                case .start(let number): start(number, replacing: rejected)
                }
                if let patience, patience < timeout {
                    DispatchQueue.global().asyncAfter(deadline: .now() + patience) { [state, waiterID] in
                        Self.giveUp(waiterID, in: state)
                    }
                }
            }
        } catch {
            throw ServiceError(error)
        }
    }

    private func start(_ number: Int, replacing rejected: String?) {
        // Only the state, not the authenticator: a refresh that never returns must not keep it
        // alive, and a weak reference to it would make a side table that such a task leaks.
        let task = Task { [state, refresh] in
            let result: Result<String, ServiceError>
            do {
                result = .success(try await refresh(rejected))
            } catch {
                result = .failure(ServiceError(error))
            }
            Self.end(number, with: result, in: state)
        }
        let ended = state.withLock { state -> Bool in
            guard state.refreshing?.number == number else { return true }
            state.refreshing?.task = task
            return false
        }
        if ended { return }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { [state] in
            Self.end(number, with: .failure(.timedOut), in: state)
        }
    }

    /// A waiter's own deadline passed before the refresh ended: it leaves with `.timedOut`.
    private static func giveUp(_ waiterID: Int, in state: Locked<State>) {
        let waiter = state.withLock { $0.refreshing?.waiters.removeValue(forKey: waiterID) }
        waiter?.resume(throwing: ServiceError.timedOut)
    }

    /// Ends refresh `number`, unless it has ended: stores its token or its failure, and answers
    /// everyone waiting.
    private static func end(_ number: Int, with result: Result<String, ServiceError>, in state: Locked<State>) {
        let ended: Refresh? = state.withLock { state in
            guard let refreshing = state.refreshing, refreshing.number == number else { return nil }
            state.refreshing = nil
            switch result {
            case .success(let token):
                state.token = token
                state.failure = nil
            case .failure(let error):
                state.failure = (refreshing.rejected, error)
            }
            return refreshing
        }
        guard let ended else { return }
        if case .failure = result { ended.task?.cancel() }
        for waiter in ended.waiters.values { waiter.resume(with: result.mapError { $0 as any Error }) }
    }
}
