import NetworkScheduler

/// A screen's group of requests, all queued behind the budget's worth of blockers that hold
/// every slot of their host: what scenarios 4 and 7 act on.
struct QueuedGroup {
    let transport = StubTransport(body: SchedulingCost.body)
    let api: APIClient
    let screen = RequestGroup()
    private let budget: Int
    private let blockers: Countdown

    /// Sends `requests` requests in `screen`, each ending with `completion`, once every slot is held.
    init(requests: Int, completion: @escaping @Sendable (Result<User, ServiceError>) -> Void) async {
        transport.hold()
        api = transport.client()
        budget = api.scheduler.hostBudget
        let blockers = Countdown(budget)
        for index in 0..<budget {
            api.send(Resource<User>(path: "/blockers/\(index)")) { _ in blockers.tick() }
        }
        self.blockers = blockers
        await waitUntil { [transport, budget] in transport.started == budget }
        for index in 0..<requests {
            api.send(Resource<User>(path: "/users/\(index)"), group: screen, completion: completion)
        }
    }

    /// Lets the blockers finish and the queue drain; returns how many of the group's requests
    /// reached the transport.
    func drain() async -> Int {
        transport.release()
        _ = await blockers.wait(timeout: 10)
        await api.scheduler.queuesDrained()
        return transport.started - budget
    }
}
