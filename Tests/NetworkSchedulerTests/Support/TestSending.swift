@testable import NetworkScheduler

/// Ways to send that only tests need: an endpoint straight to a scheduler (two callers of one
/// endpoint share a call by construction), and a completion handler that gets the reply.
extension RequestScheduler {
    func value<Model>(
        for request: Endpoint<Model>, priority: RequestPriority = .normal, group: RequestGroup? = nil,
        after dependencies: [RequestHandle] = []
    ) async throws(ServiceError) -> Model {
        try await reply(for: request, priority: priority, group: group, after: dependencies).value
    }

    @discardableResult
    func sendForReply<Model>(
        _ request: Endpoint<Model>, priority: RequestPriority = .normal, group: RequestGroup? = nil,
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
        scheduler.sendForReply(endpoint(resource), completion: completion)
    }
}
