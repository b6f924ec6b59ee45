import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import NetworkScheduler
@testable import NetworkSchedulerOutbox
import NetworkSchedulerTesting

private struct Memo: Codable, Sendable, Equatable {
    let text: String
    var tags: [String] = ["home", "draft", "2026"]
    var pinned = false
}

extension OutboxKind where Payload == Memo {
    fileprivate static let memo = OutboxKind("memo", lane: "memos") { memo in
        Resource<Data>(.post, path: "memos", body: .json(memo), decoding: .data)
    }
}

/// A journal whose `fsync` fails when a test says: the next ones, as a script.
private final class FailingDisk: Sendable {
    private let script = Locked<[Bool]>([])

    /// The next `fsync`s fail or not, in this order; those after succeed.
    func next(_ failures: [Bool]) { script.withLock { $0 = failures } }

    var synchronizer: OutboxJournal.Synchronizer {
        OutboxJournal.Synchronizer { [script] handle in
            if script.withLock({ $0.isEmpty ? false : $0.removeFirst() }) { throw POSIXError(.EIO) }
            try handle.synchronize()
        }
    }
}

/// The outbox when its disk fails or fills, when the app taps twice, and on the scheduler's
/// clock: nothing told twice, nothing both refused and sent, nothing sent twice.
@Suite struct OutboxFaultTests {
    /// `enqueue` once threw when `fsync` failed after the record was written, and the record
    /// was replayed and sent at the next launch: an app that retried the failed enqueue sent
    /// its write twice, under two keys.
    @Test func anEnqueueThatThrowsLeavesNothingToSendAfterARelaunch() async throws {
        try await OutboxFixtures.withFolder { folder in
            let harness = Harness { _ in .json("{}", status: 201) }
            let disk = FailingDisk()
            var outbox: Outbox? = try Outbox(folder: folder, client: harness.api, configuration: OutboxFixtures.quick,
                                             synchronizer: disk.synchronizer)
            disk.next([true])
            let error = #expect(throws: ServiceError.self) { try outbox?.enqueue(Memo(text: "once"), as: .memo) }
            guard case .cannotWriteFile? = error else {
                Issue.record("expected cannotWriteFile, got \(String(describing: error))")
                return
            }
            #expect(outbox?.pending.isEmpty == true)
            outbox?.close()
            outbox = nil

            let relaunched = try Outbox(folder: folder, client: harness.api)
            #expect(relaunched.pending.isEmpty)
            #expect(relaunched.damagedRecords == 0, "the record was cut off whole, not left torn")
        }
    }

    /// A resend once appended the new write, then the drop of the dead letter: a failure
    /// between the two kept both, and a second resend sent the write twice.
    @Test func aResendIsOneRecordThatEitherHappensOrNot() async throws {
        try await OutboxFixtures.withFolder { folder in
            let harness = Harness { _ in .json(#"{"message": "no"}"#, status: 422) }
            let disk = FailingDisk()
            let outbox = try Outbox(folder: folder, client: harness.api, configuration: OutboxFixtures.quick, synchronizer: disk.synchronizer)
            let told = EventLog<OutboxOutcome>()
            outbox.register(.memo) { _, outcome in told.append(outcome) }
            let dead = try outbox.enqueue(Memo(text: "refused"), as: .memo)
            #expect(await told.wait(for: 1) == [.rejected(status: 422, reason: "no")])

            // The resend's record fails to reach the disk: nothing changed.
            disk.next([true])
            let failed = #expect(throws: ServiceError.self) { try outbox.resend(dead) }
            guard case .cannotWriteFile? = failed else {
                Issue.record("expected cannotWriteFile, got \(String(describing: failed))")
                return
            }
            #expect(outbox.deadLetters.map(\.entry.id) == [dead] && outbox.pending.isEmpty)

            // A later one goes whole, even if the write after it fails: one write, no dead letter.
            disk.next([false, true])
            let resent = try #require(try outbox.resend(dead))
            #expect(outbox.deadLetters.map(\.entry.id) == [] || outbox.deadLetters.map(\.entry.id) == [resent])
            #expect(!outbox.deadLetters.contains { $0.entry.id == dead })
            outbox.close()

            let relaunched = try Outbox(folder: folder, client: harness.api)
            let ids = relaunched.pending.map(\.id) + relaunched.deadLetters.map(\.entry.id)
            #expect(ids == [resent])
        }
    }

    /// `Outbox.enqueue` of an identical write (same kind, equal payload) still waiting for its
    /// outcome is that write: a double tap posts once.
    @Test func anIdenticalWriteStillPendingIsNotEnqueuedTwice() async throws {
        try await OutboxFixtures.withFolder { folder in
            let harness = Harness { _ in .hold }
            let outbox = try Outbox(folder: folder, client: harness.api, configuration: OutboxFixtures.quick)
            let told = EventLog<Memo>()
            outbox.register(.memo) { memo, _ in told.append(memo) }

            let taps = (0..<20).map { _ in Memo(text: "hello") }
            let ids = Locked(Set<UUID>())
            DispatchQueue.concurrentPerform(iterations: taps.count) { index in
                if let id = try? outbox.enqueue(taps[index], as: .memo) { ids.withLock { _ = $0.insert(id) } }
            }
            let other = try outbox.enqueue(Memo(text: "hello", pinned: true), as: .memo)

            #expect(ids.withLock { $0.count } == 1)
            #expect(outbox.pending.count == 2 && outbox.pending.last?.id == other)
            await harness.transport.arrivals.wait(for: 1)
            harness.transport.release(with: .json("{}", status: 201))
            #expect(await told.wait(for: 1).count == 1)

            // Once it has its outcome, the same payload is a new write.
            let again = try outbox.enqueue(Memo(text: "hello"), as: .memo)
            #expect(!ids.withLock { $0.contains(again) })
            for arrived in 2...3 {
                await harness.transport.arrivals.wait(for: arrived)
                harness.transport.release(with: .json("{}", status: 201))
            }
            #expect(await told.wait(for: 3).count == 3)
            #expect(harness.transport.arrivals.count == 3)
        }
    }

    /// The waits between tries run on the scheduler's clock: a test advances it, and waits for
    /// nothing in real time.
    @Test func aWriteIsTriedAgainWhenTheSchedulersClockSaysItsWaitIsOver() async throws {
        try await OutboxFixtures.withFolder { folder in
            let clock = VirtualClock()
            let attempts = Locked(0)
            let harness = Harness(reply: { _ in
                attempts.withLock { $0 += 1; return $0 } == 1 ? .respond(status: 503) : .json("{}", status: 201)
            }) { $0.clock = clock }
            var configuration = Outbox.Configuration()
            configuration.retryPolicy.baseDelay = 3_600
            configuration.retryPolicy.maxDelay = 3_600
            let outbox = try Outbox(folder: folder, client: harness.api, configuration: configuration)
            let told = EventLog<OutboxOutcome>()
            outbox.register(.memo) { _, outcome in told.append(outcome) }
            // Only a 503 makes it wait again: it is `.sending` from the enqueue on.
            let waitingAgain = EventLog<Void>()
            let watching = Task {
                for await writes in outbox.changes() where writes.first?.phase == .waiting { waitingAgain.append(()) }
            }
            defer { watching.cancel() }

            try outbox.enqueue(Memo(text: "later"), as: .memo)
            await waitingAgain.wait(for: 1)
            #expect(told.count == 0 && harness.transport.arrivals.count == 1)

            clock.advance(by: 3_600)
            #expect(await told.wait(for: 1) == [.accepted(status: 201, body: Data("{}".utf8))])
            #expect(harness.transport.arrivals.count == 2)
        }
    }

    /// The outbox's waits are its retry policy's: a 503's `Retry-After` is waited for whole,
    /// whatever the backoff would have been.
    @Test func aWriteWaitsWhatTheServersRetryAfterAsks() async throws {
        try await OutboxFixtures.withFolder { folder in
            let clock = VirtualClock()
            let attempts = Locked(0)
            let harness = Harness(reply: { _ in
                attempts.withLock { $0 += 1; return $0 } == 1
                    ? .respond(status: 503, headers: ["Retry-After": "120"]) : .json("{}", status: 201)
            }) {
                $0.clock = clock
                // The host stays open: what holds the write is the outbox's own wait.
                $0.hostHealth = .never
            }
            var configuration = Outbox.Configuration()
            configuration.retryPolicy.baseDelay = 1
            configuration.retryPolicy.maxDelay = 1
            let outbox = try Outbox(folder: folder, client: harness.api, configuration: configuration)
            let told = EventLog<OutboxOutcome>()
            outbox.register(.memo) { _, outcome in told.append(outcome) }
            let seen = EventLog<[OutboxWriteState]>()
            // Subscribed before the first enqueue, so that a watcher started late misses nothing
            // it needs: the stream keeps the latest state, and each state is whole.
            let changes = outbox.changes()
            let watching = Task {
                for await writes in changes { seen.append(writes) }
            }
            defer { watching.cancel() }
            /// The first state seen that `matches`, waiting change by change (a bounded number).
            func firstState(where matches: ([OutboxWriteState]) -> Bool) async -> [OutboxWriteState]? {
                for _ in 0..<50 {
                    let count = seen.count
                    if let found = seen.elements.first(where: matches) { return found }
                    await seen.wait(for: count + 1)
                }
                return nil
            }

            let later = try outbox.enqueue(Memo(text: "later"), as: .memo)
            #expect(await firstState { $0.contains { $0.entry.id == later && $0.phase == .waiting } } != nil)
            // Past the backoff's ceiling, not yet the server's two minutes. A timer that fires
            // sends at once, so the first state with a write enqueued after the advance shows
            // whether the first write was sent again.
            clock.advance(by: 119)
            let barrier = try outbox.enqueue(Memo(text: "barrier"), as: .memo)
            let withBarrier = await firstState { $0.contains { $0.entry.id == barrier } }
            #expect(withBarrier?.first { $0.entry.id == later }?.phase == .waiting, "\(String(describing: withBarrier))")

            clock.advance(by: 1)
            #expect(await told.wait(for: 2).first == .accepted(status: 201, body: Data("{}".utf8)))
            #expect(harness.transport.arrivals.count == 3)
        }
    }

    /// A server may ask for any wait, and an app may set no limit: the outbox waits, and
    /// does not trap turning a wait of 10³⁰⁰ s into nanoseconds.
    @Test func aRetryAfterOfAnyLengthUnderAPolicyWithoutLimitsIsAWait() async throws {
        try await OutboxFixtures.withFolder { folder in
            let harness = Harness(reply: { _ in .respond(status: 503, headers: ["Retry-After": "1e300"]) }) {
                $0.hostHealth = .never
            }
            var configuration = Outbox.Configuration()
            configuration.retryPolicy.maxRetryAfter = .infinity
            configuration.retryPolicy.maxDelay = .infinity
            let outbox = try Outbox(folder: folder, client: harness.api, configuration: configuration)
            outbox.register(.memo) { _, _ in }
            let waitingAgain = EventLog<Void>()
            let changes = outbox.changes()
            let watching = Task {
                for await writes in changes where writes.first?.phase == .waiting { waitingAgain.append(()) }
            }
            defer { watching.cancel() }

            try outbox.enqueue(Memo(text: "whenever"), as: .memo)
            #expect(await waitingAgain.wait(for: 1).count == 1)
            #expect(outbox.pending.count == 1 && harness.transport.arrivals.count == 1)
        }
    }

    /// What the app's retry policy says is final is final, and what it says to try again is
    /// tried again: a 423 this API answers while a record is briefly locked.
    @Test func theAppsRetryPolicyDecidesWhatIsFinal() async throws {
        for retriesLocked in [false, true] {
            try await OutboxFixtures.withFolder { folder in
                let attempts = Locked(0)
                let harness = Harness(reply: { _ in
                    attempts.withLock { $0 += 1; return $0 } == 1 ? .respond(status: 423) : .json("{}", status: 201)
                })
                var configuration = Outbox.Configuration()
                configuration.retryPolicy = Outbox.defaultRetryPolicy.deciding { attempt in
                    retriesLocked && attempt.statusCode == 423 ? .retry(after: 0) : .usePolicy
                }
                let outbox = try Outbox(folder: folder, client: harness.api, configuration: configuration)
                let told = EventLog<OutboxOutcome>()
                outbox.register(.memo) { _, outcome in told.append(outcome) }

                try outbox.enqueue(Memo(text: "locked"), as: .memo)
                let outcome = await told.wait(for: 1).first
                if retriesLocked {
                    #expect(outcome == .accepted(status: 201, body: Data("{}".utf8)))
                    #expect(harness.transport.arrivals.count == 2)
                } else {
                    guard case .rejected(let status, _)? = outcome else {
                        Issue.record("expected a dead letter, got \(String(describing: outcome))")
                        return
                    }
                    #expect(status == 423)
                    #expect(harness.transport.arrivals.count == 1)
                }
            }
        }
    }

    /// A policy's `maxAttempts` bounds a write's tries: past it the write is a dead letter.
    @Test func aWriteIsADeadLetterAfterItsPolicysLastTry() async throws {
        try await OutboxFixtures.withFolder { folder in
            let harness = Harness(reply: { _ in .respond(status: 503) })
            var configuration = Outbox.Configuration()
            configuration.retryPolicy.baseDelay = 0
            configuration.retryPolicy.maxAttempts = 3
            let outbox = try Outbox(folder: folder, client: harness.api, configuration: configuration)
            let told = EventLog<OutboxOutcome>()
            outbox.register(.memo) { _, outcome in told.append(outcome) }

            try outbox.enqueue(Memo(text: "never"), as: .memo)
            guard case .rejected(let status, _)? = await told.wait(for: 1).first else {
                Issue.record("expected a dead letter")
                return
            }
            #expect(status == 503)
            #expect(harness.transport.arrivals.count == 3)
        }
    }

    #if os(Linux)
    /// A compaction once emptied the told log before it wrote the new journal: on a full disk
    /// the old journal stayed, without its told marks, and every outcome was told again at the
    /// next launch. And since opening compacts, an outbox on a full disk could not open at all.
    @Test(.enabled(if: TinyDisk.isAvailable, "needs root, to mount a tmpfs"))
    func aFullDiskAtOpenIsReportedAndNoOutcomeIsToldTwice() async throws {
        let disk = try #require(TinyDisk(bytes: 64 * 1_024))
        defer { disk.remove() }
        let folder = disk.folder.appendingPathComponent("outbox")
        let harness = Harness { request in
            let memo = request.httpBody.flatMap { try? JSONDecoder().decode(Memo.self, from: $0) }
            return memo?.text == "refused" ? .json(#"{"message": "no"}"#, status: 422) : .json("{}", status: 201)
        }
        let told = EventLog<String>()
        do {
            // Ten writes told, one of them a dead letter the journal keeps.
            let outbox = try Outbox(folder: folder, client: harness.api)
            outbox.register(.memo) { memo, _ in told.append(memo.text) }
            for index in 0..<9 { try outbox.enqueue(Memo(text: "memo \(index)"), as: .memo) }
            try outbox.enqueue(Memo(text: "refused"), as: .memo)
            #expect(await told.wait(for: 10).count == 10)
            outbox.close()
        }
        let filler = disk.folder.appendingPathComponent("filler")
        #expect(Self.fill(filler), "the disk is full")

        // When it opens on the full disk, it opens, says why it could not compact, and tells nothing again.
        do {
            let outbox = try Outbox(folder: folder, client: harness.api)
            guard case .cannotWriteFile? = outbox.compactionFailure else {
                Issue.record("expected a compaction failure, got \(String(describing: outbox.compactionFailure))")
                return
            }
            outbox.register(.memo) { memo, _ in told.append(memo.text) }
            #expect(outbox.deadLetters.count == 1 && outbox.pending.isEmpty)
            outbox.close()
        }

        // Then, with room again, it compacts, and still tells nothing again.
        try FileManager.default.removeItem(at: filler)
        let outbox = try Outbox(folder: folder, client: harness.api)
        #expect(outbox.compactionFailure == nil)
        outbox.register(.memo) { memo, _ in told.append(memo.text) }
        #expect(told.count == 10)
        #expect(outbox.deadLetters.count == 1)
        #expect(harness.transport.arrivals.count == 10)
    }

    /// Writes to `file` until the disk has no room left; whether it got there.
    private static func fill(_ file: URL) -> Bool {
        guard FileManager.default.createFile(atPath: file.path, contents: nil),
              let handle = try? FileHandle(forWritingTo: file) else { return false }
        defer { try? handle.close() }
        let block = Data(repeating: 0, count: 1_024)
        for _ in 0..<1_024 {
            do { try handle.write(contentsOf: block) } catch { return true }
        }
        return false
    }
    #endif
}
