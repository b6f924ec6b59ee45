import Dispatch
import Foundation
import NetworkScheduler

/// Scenario 3: `callers` identical requests join one network call; measured from the moment
/// its response arrives until the last caller has its model.
struct FanOut {
    struct Result {
        let networkCalls: Int
        let deliveryNanoseconds: UInt64
        let callers: Int
    }

    let callers: Int

    func run() async -> Result {
        let transport = StubTransport(body: SchedulingCost.body)
        transport.hold()
        let api = transport.client()
        let delivered = Countdown(callers)
        for _ in 0..<callers {
            api.send(Resource<User>(path: "/users/1")) { result in
                precondition((try? result.get()) != nil, "a joiner failed")
                delivered.tick()
            }
        }
        await waitUntil { transport.started == 1 }
        let released = now()
        transport.release()
        let finished = await delivered.wait(timeout: 60)
        precondition(finished, "the joiners were not all delivered within 60 s")
        return Result(networkCalls: transport.started, deliveryNanoseconds: delivered.endedAt - released, callers: callers)
    }
}

/// Polls `condition` (for setup only, never in a measured span) until it holds; at most 10 s.
func waitUntil(_ condition: () -> Bool) async {
    let deadline = now() + 10_000_000_000
    while !condition() {
        precondition(now() < deadline, "a benchmark's setup did not complete within 10 s")
        await Task.yield()
    }
}
