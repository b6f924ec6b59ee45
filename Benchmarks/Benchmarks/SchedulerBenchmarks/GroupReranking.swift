import NetworkScheduler

/// Scenario 7: a screen's group of `requests` requests, all queued behind a full budget, is
/// lowered (the screen hidden), raised (shown again), then cancelled, in one iteration.
/// Measured: each `setPriority(_:)` call, and the `cancelAll()` call that ends the iteration,
/// the baseline of a pass over the same group.
struct GroupReranking {
    struct Result {
        let lowerNanoseconds: UInt64
        let raiseNanoseconds: UInt64
        let cancelNanoseconds: UInt64
        let requests: Int
    }

    let requests: Int

    func run() async -> Result {
        let cancelled = Countdown(requests)
        let queued = await QueuedGroup(requests: requests) { _ in cancelled.tick() }
        let start = now()
        queued.screen.setPriority(.background)
        let lowered = now()
        queued.screen.setPriority(.high)
        let raised = now()
        queued.screen.cancelAll()
        let ended = now()
        let finished = await cancelled.wait(timeout: 60)
        precondition(finished, "the group's callers were not all cancelled within 60 s")
        let reached = await queued.drain()
        precondition(reached == 0, "a re-ranked, then cancelled request reached the transport")
        return Result(lowerNanoseconds: lowered - start, raiseNanoseconds: raised - lowered,
                      cancelNanoseconds: ended - raised, requests: requests)
    }
}
