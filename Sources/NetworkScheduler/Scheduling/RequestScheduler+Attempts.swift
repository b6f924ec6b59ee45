import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// What the scheduler reports to its machine about attempts, and the work it does for them
// outside the lock: a token refresh. The decisions (retry, backoff, refresh, deliver) are the
// machine's: see `SchedulerMachine+Attempts.swift`.
extension RequestScheduler {
    /// An attempt's operation reported its outcome.
    func attemptEnded(_ attempt: AttemptID, with outcome: Result<TransportResponse, ServiceError>) {
        let now = clock.uptimeNanoseconds
        let date = clock.now
        feed { $0.attemptEnded(attempt, with: outcome, now: now, date: date) }
    }

    /// Gets a token newer than the one the server rejected, then has the machine send the call
    /// again with its request rebuilt, or fail it.
    func refreshToken(_ refresh: Machine.TokenRefresh) {
        Task { [weak self] in
            do throws(ServiceError) {
                _ = try await refresh.authenticator.token(replacing: refresh.rejected)
                self?.replayWithNewToken(refresh.call)
            } catch {
                self?.tokenRefreshed(refresh.call, rebuilt: .failure(.authenticationFailed(cause: error)))
            }
        }
    }

    /// Builds the call's request again, now carrying the new token.
    private func replayWithNewToken(_ call: CallID) {
        guard let submission = state.withLock({ $0.submission(of: call) }) else { return }
        let rebuilt: Result<PreparedRequest, ServiceError>
        do throws(ServiceError) {
            rebuilt = .success(try submission.prepare())
        } catch {
            rebuilt = .failure(error)
        }
        tokenRefreshed(call, rebuilt: rebuilt)
    }

    private func tokenRefreshed(_ call: CallID, rebuilt: Result<PreparedRequest, ServiceError>) {
        let now = clock.uptimeNanoseconds
        feed { $0.tokenRefreshed(call, rebuilt: rebuilt, now: now) }
    }

    /// The error a retried attempt ended with, for the event monitors.
    static func cause(of outcome: Result<TransportResponse, ServiceError>) -> ServiceError {
        switch outcome {
        case .success(let payload):
            .server(ServerErrorResponse(statusCode: payload.response.statusCode, body: payload.data,
                                        headers: payload.response.lowercasedHeaders))
        case .failure(let error):
            error
        }
    }
}
