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
        let cancelled = Countdown(requests)
        let queued = await QueuedGroup(requests: requests) { result in
            guard case .failure(.cancelled) = result else { preconditionFailure("a grouped request was not cancelled") }
            cancelled.tick()
        }
        let start = now()
        queued.screen.cancelAll()
        let returned = now()
        let finished = await cancelled.wait(timeout: 60)
        precondition(finished, "the cancelled callers were not all delivered within 60 s")
        // Drained, so that a cancelled request that still started would be counted.
        let reached = await queued.drain()
        return Result(cancelCallNanoseconds: returned - start, allDeliveredNanoseconds: cancelled.endedAt - start,
                      reachedTransport: reached, requests: requests)
    }
}
