/// What a network call produced for one caller.
struct CallResult: Sendable, Equatable {
    var outcome: Result<TransportResponse, ServiceError>
    /// Its waits and sharing, as the machine measured them; see ``metrics``.
    var measured = ResponseMetrics()
    /// The `Idempotency-Key` the call carried, which gives 409 and 422 their meaning.
    var idempotencyKey: String?
    /// Shared by the callers of one call, so that those reading it the same way decode once.
    var sharedDecodes: SharedDecodes?

    static func failure(_ error: ServiceError) -> CallResult {
        CallResult(outcome: .failure(error))
    }

    /// What the caller is told of the call: the machine's figures, with the status read here,
    /// since the machine reads none.
    var metrics: ResponseMetrics {
        var metrics = measured
        if case .success(let response) = outcome {
            metrics.statusCode = response.statusCode
            metrics.cacheUse = response.cacheUse
        }
        return metrics
    }
}

extension CallResult {
    /// What the machine decided for one caller. `decodes` is shared by the callers of one call
    /// delivered together: those reading its answer the same way decode it once.
    init(_ delivery: RequestScheduler.Machine.Delivery, sharing decodes: inout (call: CallID, decodes: SharedDecodes)?) {
        outcome = delivery.outcome
        measured = ResponseMetrics(wasShared: delivery.measured.wasShared, queuedDuration: delivery.measured.queued,
                                   networkDuration: delivery.measured.onTheWire)
        idempotencyKey = delivery.servedBy?.request.idempotencyKey
        // An error has nothing to decode.
        guard delivery.measured.wasShared, let call = delivery.servedBy?.id, case .success = outcome else { return }
        if decodes?.call != call { decodes = (call, SharedDecodes()) }
        sharedDecodes = decodes?.decodes
    }
}

/// The outcomes the machine decides by itself, as the scheduler's callers get them.
extension Result: CallOutcome where Success == TransportResponse, Failure == ServiceError {
    @usableFromInline package static var attemptTimedOut: Self { .failure(.timedOut) }
    @usableFromInline package static var callerDeadlinePassed: Self { .failure(.deadlineExceeded) }
    @usableFromInline package static func lineFull(host: String) -> Self { .failure(.lineFull(host: host)) }
}
