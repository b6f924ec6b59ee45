import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import NetworkScheduler
import NetworkSchedulerTesting

extension HeavyTests {
    /// Three schedulers in one process, whose requests wait for each other's: every caller ends
    /// exactly once, no dependent succeeds unless all its dependencies did, no machine's
    /// priorities are corrupted (the crash of a dependent of another scheduler's request), and
    /// each scheduler is left empty.
    @Suite struct CrossSchedulerStressTests {
        static let schedulers = 3
        static let rounds = isThreadSanitized ? 10 : 20
        static let callersPerRound = 300
        static let workers = 3

        typealias Server = ExactlyOnceStressTests.Server
        typealias Ledger = ExactlyOnceStressTests.Ledger

        /// Handles any worker may make a request wait for, of every scheduler.
        final class Recent: Sendable {
            private let handles = Locked<[RequestHandle]>([])

            func add(_ handle: RequestHandle) {
                handles.withLock { handles in
                    if handles.count == 64 { handles.removeFirst() }
                    handles.append(handle)
                }
            }

            func pick(using random: inout SeededGenerator) -> RequestHandle? {
                let all = handles.withLock { $0 }
                return all.randomElement(using: &random)
            }
        }

        /// What the run exercised: dependencies on another scheduler's request, and dependents
        /// that ended because such a dependency failed or was cancelled.
        final class Coverage: Sendable {
            let crossDependencies = Locked(0)
            let dependencyFailures = Locked<[String: Int]>([:])
        }

        /// A round's dependents, each with what it waited for.
        final class Dependents: Sendable {
            let all = Locked<[(dependent: RequestHandle, dependencies: [RequestHandle])]>([])
        }

        @Test(arguments: [0x5EED_0011, 0x5EED_0012] as [UInt64])
        func everyCallerEndsExactlyOnceWhenRequestsWaitAcrossSchedulers(seed: UInt64) async {
            // Fresh schedulers each round: their callers' places and generations then coincide
            // often, as those of schedulers made at launch do, and a place one names in another
            // is held there.
            let coverage = Coverage()
            for round in 0..<Self.rounds {
                await Self.runRound(seed: seed &+ UInt64(round) &* 1_000, coverage: coverage)
            }
            let crossDependencies = coverage.crossDependencies.withLock { $0 }
            #expect(crossDependencies > Self.rounds * Self.callersPerRound / 20,
                    "seed \(seed): only \(crossDependencies) dependencies on another scheduler")
            let failures = coverage.dependencyFailures.withLock { $0 }
            #expect(failures["cancelled", default: 0] >= 10 && failures.count >= 3,
                    "seed \(seed): too few dependents ended by a dependency's failure or cancellation: \(failures)")
        }

        private static func runRound(seed: UInt64, coverage: Coverage) async {
            let servers = (0..<schedulers).map { _ in Server() }
            let schedulers = servers.map { server in
                RequestScheduler(configuration: .init(transport: server.transport,
                                                      retryPolicy: RetryPolicy(maxAttempts: 2, baseDelay: 0.001)))
            }
            let apis = schedulers.map { APIClient(baseURL: URL(string: "https://api.test")!, scheduler: $0) }
            let ledger = Ledger(callers: callersPerRound)
            let recent = Recent()
            let dependents = Dependents()

            let workersDone = EventLog<Int>()
            for worker in 0..<workers {
                Thread {
                    drive(worker: worker, seed: seed, apis: apis, servers: servers, recent: recent,
                          ledger: ledger, dependents: dependents, coverage: coverage)
                    workersDone.append(worker)
                }.start()
            }
            #expect(await workersDone.wait(for: workers, timeout: 300).count == workers)
            for server in servers {
                server.draining.withLock { $0 = true }
                server.transport.stopHolding(answering: .json(userJSON))
            }

            let ended = await ledger.ended.wait(for: callersPerRound, timeout: 300)
            #expect(ended.count == callersPerRound, "seed \(seed): only \(ended.count) callers ended")
            let deliveries = ledger.deliveries
            #expect(deliveries.allSatisfy { $0 == 1 },
                    "seed \(seed): callers with other than one outcome: \(deliveries.enumerated().filter { $0.element != 1 }.prefix(5))")
            let sentAfterAFailure = dependents.all.withLock { $0 }.filter { pair in
                pair.dependent.outcome == .succeeded && pair.dependencies.contains { $0.outcome != .succeeded }
            }.map(\.dependent.id)
            #expect(sentAfterAFailure.isEmpty,
                    "seed \(seed): dependents that succeeded after a dependency did not: \(sentAfterAFailure.prefix(3))")
            for (index, scheduler) in schedulers.enumerated() {
                await scheduler.queuesDrained()
                let (census, violations, operations) = scheduler.state.withLock {
                    ($0.machine.census, $0.machine.invariantViolations(), $0.operations.count)
                }
                #expect(census.callers == 0 && census.calls == 0 && census.registered == 0 && operations == 0,
                        "seed \(seed), scheduler \(index): \(census), \(operations) operations")
                #expect(violations.isEmpty, "seed \(seed), scheduler \(index): \(violations.prefix(3))")
            }
        }

        /// One thread's share of callers: each sent to a random scheduler, a third of them after
        /// a recent request of any scheduler, with cancellations and answers between sends.
        /// Every 25 callers, one is held and the next waits for it on another scheduler before it
        /// is cancelled: whatever the timing, some dependents end by another scheduler's
        /// cancellation (a run on a loaded machine once saw five of them by chance alone).
        private static func drive(worker: Int, seed: UInt64, apis: [APIClient], servers: [Server], recent: Recent,
                                  ledger: Ledger, dependents: Dependents, coverage: Coverage) {
            var random = SeededGenerator(seed: seed &+ UInt64(worker))
            // Groups span the schedulers, as a screen's requests may.
            let groups = (0..<6).map { _ in RequestGroup() }
            let perWorker = callersPerRound / workers
            var toCancel: RequestHandle?
            for index in 0..<perWorker {
                let caller = worker * perWorker + index
                var target = Int(random.next() % UInt64(apis.count))
                let answer = index % 25 == 11 ? 3 : random.next() % 5
                let resource = Resource<User>(path: "items/\(random.next() % 20)",
                                              query: [URLQueryItem(name: "v", value: "\(answer)")])
                var dependencies: [RequestHandle] = []
                if let held = toCancel {
                    dependencies = [held]
                    target = (apis.firstIndex { $0.scheduler === held.scheduler }! + 1) % apis.count
                } else if random.next() % 3 == 0 {
                    for _ in 0...(random.next() % 2) {
                        guard let dependency = recent.pick(using: &random) else { break }
                        dependencies.append(dependency)
                    }
                }
                let foreign = dependencies.count { $0.scheduler !== apis[target].scheduler }
                if foreign > 0 { coverage.crossDependencies.withLock { $0 += foreign } }
                let handle = apis[target].send(
                    resource, priority: RequestPriority.allCases.randomElement(using: &random)!,
                    group: random.next() % 2 == 0 ? groups.randomElement(using: &random) : nil,
                    after: dependencies
                ) { result in
                    if case .dependencyFailed(let cause, _)? = result.failure {
                        coverage.dependencyFailures.withLock { $0[cause.caseName, default: 0] += 1 }
                    }
                    ledger.record(caller, result)
                }
                recent.add(handle)
                if !dependencies.isEmpty { dependents.all.withLock { $0.append((handle, dependencies)) } }
                if let held = toCancel {
                    held.cancel()
                    toCancel = nil
                } else if index % 25 == 11 {
                    toCancel = handle
                }
                let server = servers.randomElement(using: &random)!
                switch random.next() % 100 {
                case 0..<6: recent.pick(using: &random)?.cancel()
                case 6: groups.randomElement(using: &random)?.cancelAll()
                case 7..<12: recent.pick(using: &random)?.priority = RequestPriority.allCases.randomElement(using: &random)!
                case 12..<55: server.transport.release(with: .json(userJSON))
                case 55..<63: server.transport.release(with: .fail(URLError(.networkConnectionLost)))
                case 63..<70: server.transport.release(with: .json(#"{"message": "busy"}"#, status: 503))
                default: break
                }
                if index % 25 == 24 {
                    // Lets held calls end, so that the waiting lines move.
                    for server in servers {
                        for _ in 0..<4 { server.transport.release(with: .json(userJSON)) }
                    }
                }
            }
            withExtendedLifetime(groups) {}
        }
    }
}
