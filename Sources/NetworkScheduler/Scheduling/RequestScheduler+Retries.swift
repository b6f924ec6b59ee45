import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// What happens between the attempts of a network call: backoff, a token refresh, a wait for
// connectivity. The decisions are `SchedulerState.end(_:freeingLowPrioritySlot:with:timing:jitter:makeOperation:)`'s.
extension RequestScheduler {
    /// Gives the attempt's budget slot to the next waiting call, decides what the attempt's
    /// outcome means for its call, and does it.
    func attemptEnded(
        _ call: SchedulerState.Call,
        freeingLowPrioritySlot: Bool,
        with outcome: Result<TransportResponse, ServiceError>,
        timing: DataTaskOperation.Timing
    ) {
        let (ending, starts) = state.withLock {
            $0.end(call, freeingLowPrioritySlot: freeingLowPrioritySlot, with: outcome, timing: timing,
                   jitter: Double.random(in: 0...1), makeOperation: makeOperation)
        }
        start(starts)
        switch ending {
        case .gone:
            break
        case .deliver(let deliveries):
            RequestHandle.complete(deliveries)
        case let .retry(delay, attempt, request):
            record(.retried(request.urlRequest, attempt: attempt, after: delay, cause: Self.cause(of: outcome)))
            if delay > 0 {
                DispatchQueue.global().asyncAfter(deadline: .now() + delay) { [weak self] in self?.restart(call) }
            } else {
                restart(call)
            }
        case let .refreshToken(authenticator, rejected, attempt, request):
            record(.retried(request.urlRequest, attempt: attempt, after: 0, cause: Self.cause(of: outcome)))
            Task { [weak self] in
                do throws(ServiceError) {
                    _ = try await authenticator.token(replacing: rejected)
                    self?.replayWithNewToken(call)
                } catch {
                    self?.failCall(call, with: .authenticationFailed(cause: error))
                }
            }
        }
    }

    /// Puts a call back in its waiting line for its next attempt, unless its callers have all
    /// left meanwhile.
    private func restart(_ call: SchedulerState.Call, rebuilt: PreparedRequest? = nil) {
        start(state.withLock { $0.restart(call, rebuilt: rebuilt, makeOperation: makeOperation) })
    }

    /// Builds the call's request again, now carrying the new token, and sends it.
    private func replayWithNewToken(_ call: SchedulerState.Call) {
        guard let submission = state.withLock({ $0.submission(of: call) }) else { return }
        do {
            restart(call, rebuilt: try submission.prepare())
        } catch {
            failCall(call, with: error)
        }
    }

    private func failCall(_ call: SchedulerState.Call, with error: ServiceError) {
        RequestHandle.complete(state.withLock { $0.fail(call, with: error) })
    }

    /// The error a retried attempt ended with, for the event monitor.
    private static func cause(of outcome: Result<TransportResponse, ServiceError>) -> ServiceError {
        switch outcome {
        case .success(let payload):
            .server(ServerErrorResponse(statusCode: payload.response.statusCode, body: payload.data,
                                        headers: payload.response.lowercasedHeaders))
        case .failure(let error):
            error
        }
    }
}
