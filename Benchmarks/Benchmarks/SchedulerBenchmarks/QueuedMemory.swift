import Foundation
import NetworkScheduler

/// Scenario 6: resident memory per queued request, with `requests` requests waiting behind a
/// full budget. Measured first thing in its process, so that pages freed earlier do not hide
/// the growth.
struct QueuedMemory {
    let requests: Int

    /// Resident bytes per queued request.
    func run() async -> Double {
        let transport = StubTransport(body: SchedulingCost.body)
        transport.hold()
        let api = transport.client()
        let screen = RequestGroup()
        let cancelled = Countdown(requests)
        let before = residentBytes()
        for index in 0..<requests {
            api.send(Resource<User>(path: "/users/\(index)"), group: screen) { _ in
                cancelled.tick()
            }
        }
        let grown = residentBytes() - before
        screen.cancelAll()
        let finished = await cancelled.wait(timeout: 60)
        precondition(finished, "the queued requests were not all cancelled within 60 s")
        transport.release()
        await api.scheduler.queuesDrained()
        return Double(grown) / Double(requests)
    }
}
