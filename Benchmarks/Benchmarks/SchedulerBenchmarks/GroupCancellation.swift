import Dispatch
import Foundation
import NetworkScheduler

/// Scenario 4: a screen's group of `requests` requests, all queued behind a full budget, is
/// cancelled. Measured: the `cancelAll()` call, and until every caller has its `.cancelled`;
/// counted: how many of them reached the transport.
struct GroupCancellation {
    struct Result {
        let cancelCallNanoseconds: UInt64
        let allDeliveredNanoseconds: UInt64
        let reachedTransport: Int
        let requests: Int
    }

    let requests: Int

    func run() async -> Result {
        let transport = StubTransport(body: SchedulingCost.body)
        transport.hold()
        let api = transport.client()
        // The budget's worth of requests outside the group hold every slot.
        let budget = api.scheduler.hostBudget
        let blockers = Countdown(budget)
        for index in 0..<budget {
            api.send(Resource<User>(path: "/blockers/\(index)")) { _ in blockers.tick() }
        }
        await waitUntil { transport.started == budget }
        let screen = RequestGroup()
        let cancelled = Countdown(requests)
        for index in 0..<requests {
            api.send(Resource<User>(path: "/users/\(index)"), group: screen) { result in
                guard case .failure(.cancelled) = result else { preconditionFailure("a grouped request was not cancelled") }
                cancelled.tick()
            }
        }
        let start = now()
        screen.cancelAll()
        let returned = now()
        let finished = await cancelled.wait(timeout: 60)
        precondition(finished, "the cancelled callers were not all delivered within 60 s")
        // Let the blockers finish and the queue drain, so that a cancelled request that still
        // started would be counted.
        transport.release()
        _ = await blockers.wait(timeout: 10)
        await api.scheduler.queuesDrained()
        return Result(cancelCallNanoseconds: returned - start, allDeliveredNanoseconds: cancelled.endedAt - start,
                      reachedTransport: transport.started - budget,
                      requests: requests)
    }
}
