import Dispatch
import Foundation
import Testing
@testable import NetworkScheduler
import NetworkSchedulerTesting

/// Completion handlers run on the configured queue, in the order their callers ended, and
/// callers that end while others wait for the queue share their hop to it.
@Suite struct CallbackQueueTests {
    private static let marker = DispatchSpecificKey<String>()

    /// A scheduler over a stub that holds every request, with a callback queue that marks
    /// itself and starts suspended: a gate the test opens.
    private static func harness() -> (StubTransport, APIClient, DispatchQueue) {
        let queue = DispatchQueue(label: "callbacks under test")
        queue.setSpecific(key: marker, value: "callbacks under test")
        queue.suspend()
        let transport = StubTransport { _ in .hold }
        let scheduler = RequestScheduler(configuration: .init(transport: transport, callbackQueue: queue,
                                                              retryPolicy: .never))
        return (transport, APIClient(baseURL: URL(string: "https://api.test")!, scheduler: scheduler), queue)
    }

    @Test func completionsRunOnTheCallbackQueueInTheOrderTheirCallersEnded() async {
        let (transport, api, queue) = Self.harness()
        let ran = EventLog<(path: String, queue: String?)>()
        for path in ["a", "b", "c"] {
            api.send(Resource<User>(path: path)) { _ in
                ran.append((path, DispatchQueue.getSpecific(key: Self.marker)))
            }
        }
        await transport.arrivals.wait(for: 3)

        // A stub's release ends its caller on the releasing thread, so this is the order they end.
        for path in ["/c", "/a", "/b"] { transport.release(path: path, with: .json(userJSON)) }
        queue.resume()

        let completions = await ran.wait(for: 3)
        #expect(completions.map(\.path) == ["c", "a", "b"])
        #expect(completions.allSatisfy { $0.queue == "callbacks under test" })
    }

    @Test func callersEndingWhileOthersWaitForTheQueueShareTheirHop() async {
        let (transport, api, queue) = Self.harness()
        let ran = EventLog<String>()
        for path in ["a", "b", "c"] {
            api.send(Resource<User>(path: path)) { _ in ran.append(path) }
        }
        await transport.arrivals.wait(for: 3)

        // Given a hop to the queue on its way for "a", and other work sent to the queue after it,
        transport.release(path: "/a", with: .json(userJSON))
        queue.async { ran.append("other work") }
        // when "b" and "c" end before that hop has run,
        transport.release(path: "/b", with: .json(userJSON))
        transport.release(path: "/c", with: .json(userJSON))
        queue.resume()

        // then they run in the hop of "a", ahead of the work sent after it.
        #expect(await ran.wait(for: 4) == ["a", "b", "c", "other work"])
    }
}
