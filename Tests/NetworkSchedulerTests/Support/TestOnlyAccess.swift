import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import NetworkScheduler

/// What only tests need of the library's internals. Ways to send: an endpoint straight to a
/// scheduler (two callers of one endpoint share a call by construction), and a completion
/// handler that gets the reply.
extension RequestScheduler {
    func value<Model>(
        for request: ResolvedResource<Model>, priority: RequestPriority = .normal, group: RequestGroup? = nil,
        after dependencies: [RequestHandle] = []
    ) async throws(ServiceError) -> Model {
        try await reply(for: request, priority: priority, group: group, after: dependencies).value
    }

    @discardableResult
    func sendForReply<Model>(
        _ request: ResolvedResource<Model>, priority: RequestPriority = .normal, group: RequestGroup? = nil,
        completion: @escaping @Sendable (Result<Reply<Model>, ServiceError>) -> Void
    ) -> RequestHandle {
        enqueue(request, priority: priority, group: group, after: [], callbacks: callbacks, completion: .reply(completion))
    }
}

extension APIClient {
    @discardableResult
    func sendForReply<Model>(
        _ resource: Resource<Model>,
        completion: @escaping @Sendable (Result<Reply<Model>, ServiceError>) -> Void
    ) -> RequestHandle {
        scheduler.sendForReply(resolve(resource), completion: completion)
    }
}

extension DataTaskOperation {
    /// An operation on its own, as tests make one: for a `URLRequest`, told only its outcome.
    convenience init(
        request: URLRequest,
        transport: any HTTPTransport,
        policy: TransportPolicy = TransportPolicy(),
        onCompletion: @escaping Completion
    ) {
        let submission = Submission(.urlRequest(request), deduplication: .automatic)
        self.init(request: ScheduledRequest(PreparedRequest(request), of: submission), transport: transport, policy: policy,
                  onStart: nil, onCompletion: onCompletion)
    }
}

extension AttemptOperations {
    /// The operations made and not yet ended, for a check that none is kept alive.
    var made: [DataTaskOperation] {
        Array(operations.values)
    }
}
