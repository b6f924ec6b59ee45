/// A call's request as the scheduler hands it to its machine: what it was made from, what goes
/// on the wire, and the `Idempotency-Key` it carries. The machine keeps it with the call and
/// reads only its ``SchedulingTerms``; the scheduler reads the rest where it acts (an attempt's
/// operation, a verdict, a token refresh, the monitors).
struct ScheduledRequest: Sendable, Equatable {
    /// How to build it again after a token refresh, and its policies.
    let submission: Submission
    /// The request as sent, reused by every attempt.
    let prepared: PreparedRequest
    /// The `Idempotency-Key` it carries, the same for every attempt; it gives 409 and 422
    /// their meaning.
    let idempotencyKey: String?

    init(_ prepared: PreparedRequest, of submission: Submission) {
        self.submission = submission
        self.prepared = prepared
        idempotencyKey = prepared.header("idempotency-key")
    }

    /// The request built again after a token refresh, with the new token: it carries the
    /// `Idempotency-Key`, the context fields (``ContextPropagation``) and the adapter's identity
    /// it was sent with (a user switched in meanwhile fails the replay's adapter check instead
    /// of taking the call).
    func rebuilt() throws(ServiceError) -> ScheduledRequest {
        let names = submission.contextPropagation?.fieldNames ?? []
        let context = HeaderFields(prepared.headerFields.filter { field in
            names.contains { HeaderFields.isSameName($0, field.name) }
        })
        var rebuilt = try submission.prepare(context: context, identity: prepared.adaptation?.identity)
        if let idempotencyKey { rebuilt.setValue(idempotencyKey, forHTTPHeaderField: "Idempotency-Key") }
        return ScheduledRequest(rebuilt, of: submission)
    }
}

extension ScheduledRequest: SchedulingTerms {
    typealias Key = CallKey

    var origin: String { prepared.host }
    var hostName: String? { prepared.hostName }
    var opensStream: Bool { submission.opensStream }
    var lane: Lane? { submission.lane }
    var attemptTimeout: Seconds { prepared.timeout }
    var runsOnWithoutCallers: Bool { idempotencyKey != nil }
}
