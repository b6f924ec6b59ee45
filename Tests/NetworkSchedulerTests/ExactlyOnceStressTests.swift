import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import NetworkScheduler
import NetworkSchedulerTesting

extension HeavyTests {
    /// Every caller ends exactly once, whatever the interleaving of completions, failures, retries,
    /// cancellations, group cancellations, dedup joins and dependencies.
    @Suite struct ExactlyOnceStressTests {
        static let callers = 10_000
        static let workers = 4

        /// Each caller's number of outcomes, and how many of each kind there were.
        final class Ledger: Sendable {
            private let counts: Locked<[Int]>
            let kinds = Locked<[String: Int]>([:])
            let ended = EventLog<Int>()

            init(callers: Int) {
                counts = Locked([Int](repeating: 0, count: callers))
            }

            func record(_ caller: Int, _ result: Result<User, ServiceError>) {
                counts.withLock { $0[caller] += 1 }
                let kind = result.failure.map { $0.rootCause.caseName } ?? "success"
                kinds.withLock { $0[kind, default: 0] += 1 }
                ended.append(caller)
            }

            var deliveries: [Int] { counts.withLock { $0 } }
        }

        /// A stub whose answers the seed decides: at once, a failure, or held until released; once
        /// `drain` is set, everything is answered at once.
        final class Server: Sendable {
            let draining = Locked(false)
            let transport: StubTransport

            init() {
                let draining = draining
                transport = StubTransport(maximumConnectionsPerHost: 4) { request in
                    if draining.withLock({ $0 }) { return .json(userJSON) }
                    switch request.url?.query {
                    case "v=0": return .fail(URLError(.timedOut))
                    case "v=1": return .json("<html>oops</html>", status: 500)
                    // Not left to the releases alone: under load they may find nothing held.
                    case "v=2": return .fail(URLError(.networkConnectionLost))
                    default: return .hold
                    }
                }
            }
        }

        @Test(arguments: [0x5EED_0001, 0x5EED_0002] as [UInt64])
        func everyCallerEndsExactlyOnce(seed: UInt64) async {
            let server = Server()
            let events = EventRecorder()
            // Retries too, within a millisecond, so that they interleave with everything else.
            let scheduler = RequestScheduler(configuration: .init(
                transport: server.transport, eventMonitors: [events],
                retryPolicy: RetryPolicy(maxAttempts: 2, baseDelay: 0.001)))
            let api = APIClient(baseURL: URL(string: "https://api.test")!, scheduler: scheduler)
            let ledger = Ledger(callers: Self.callers)

            // Dedicated threads, as an app's would be: `concurrentPerform` would take the whole
            // dispatch pool, which the operation queues need, and nothing would start meanwhile.
            let workersDone = EventLog<Int>()
            for worker in 0..<Self.workers {
                Thread {
                    Self.drive(worker: worker, seed: seed, scheduler: scheduler, api: api, server: server, ledger: ledger)
                    workersDone.append(worker)
                }.start()
            }
            #expect(await workersDone.wait(for: Self.workers, timeout: 300).count == Self.workers)
            let arrivedWhileDriving = server.transport.arrivals.count
            server.draining.withLock { $0 = true }
            server.transport.stopHolding(answering: .json(userJSON))

            let ended = await ledger.ended.wait(for: Self.callers, timeout: 300)
            #expect(ended.count == Self.callers, "seed \(seed): only \(ended.count) callers ended")
            let deliveries = ledger.deliveries
            #expect(deliveries.allSatisfy { $0 == 1 },
                    "seed \(seed): callers with other than one outcome: \(deliveries.enumerated().filter { $0.element != 1 }.prefix(5))")
            await scheduler.queuesDrained()
            let (census, operations) = scheduler.state.withLock { ($0.machine.census, $0.operations.count) }
            #expect(census.callers == 0 && census.calls == 0 && census.registered == 0 && operations == 0,
                    "seed \(seed): \(census), \(operations) operations")
            let (lines, linesAreEmpty, violations) = scheduler.state.withLock {
                ($0.machine.lineCounts, $0.machine.lineEntryCount == 0, $0.machine.invariantViolations())
            }
            #expect(violations.isEmpty, "seed \(seed): \(violations.prefix(3))")
            #expect(lines.running == 0 && lines.lowPriorityRunning == 0 && lines.waiting == 0 && linesAreEmpty, "seed \(seed): budget slots or line entries left: \(lines)")

            // The run must have exercised what it claims to: joins, and every kind of ending.
            #expect(arrivedWhileDriving > 100, "seed \(seed): only \(arrivedWhileDriving) calls ran while driving")
            #expect(events.joined.count > 100, "seed \(seed): only \(events.joined.count) callers joined a call")
            let kinds = ledger.kinds.withLock { $0 }
            #expect(kinds.values.allSatisfy { $0 >= 10 } && kinds.count == 5, "seed \(seed): too few of some ending: \(kinds)")
            #expect(events.retried.count > 100, "seed \(seed): only \(events.retried.count) retries")
        }

        /// One thread's share of callers, with the seed's random cancellations and answers between sends.
        private static func drive(worker: Int, seed: UInt64, scheduler: RequestScheduler, api: APIClient, server: Server,
                                  ledger: Ledger) {
            var random = SeededGenerator(seed: seed &+ UInt64(worker))
            let groups = (0..<8).map { _ in RequestGroup() }
            var handles: [RequestHandle] = []
            let perWorker = callers / workers
            for index in 0..<perWorker {
                let caller = worker * perWorker + index
                // Few distinct URLs, so that many callers join calls in flight.
                let resource = Resource<User>(path: "items/\(random.next() % 40)",
                                              query: [URLQueryItem(name: "v", value: "\(random.next() % 5)")])
                let dependencies = handles.isEmpty || random.next() % 10 != 0 ? [] : [handles.randomElement(using: &random)!]
                let handle = api.send(resource, priority: RequestPriority.allCases.randomElement(using: &random)!,
                                      group: random.next() % 2 == 0 ? groups.randomElement(using: &random) : nil,
                                      after: dependencies) { ledger.record(caller, $0) }
                handles.append(handle)
                switch random.next() % 100 {
                case 0..<4: handles.randomElement(using: &random)?.cancel()
                case 4: groups.randomElement(using: &random)?.cancelAll()
                case 5..<50: server.transport.release(with: .json(userJSON))
                case 50..<60: server.transport.release(with: .fail(URLError(.networkConnectionLost)))
                case 60..<70: server.transport.release(with: .json(#"{"message": "busy"}"#, status: 503))
                default: break
                }
                if index % 50 == 49 { letCallsCatchUp(scheduler: scheduler, server: server) }
            }
            withExtendedLifetime(groups) {}
        }

        /// Waits until another call reaches the stub, releasing held ones to make room, unless no
        /// call waits for a slot; bounded. On a busy machine the workers could otherwise send every
        /// caller before the queue starts a call, and the run would exercise little but joins.
        private static func letCallsCatchUp(scheduler: RequestScheduler, server: Server) {
            let arrived = server.transport.arrivals.count
            let deadline = DispatchTime.now() + 2
            while server.transport.arrivals.count == arrived, DispatchTime.now() < deadline,
                  scheduler.state.withLock({ $0.machine.lineCounts.waiting }) > 0 {
                server.transport.release(with: .json(userJSON))
                server.transport.arrivals.waitBlocking(for: arrived + 1, timeout: 0.01)
            }
        }
    }
}
