import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import NetworkScheduler
@testable import NetworkSchedulerOutbox
import NetworkSchedulerTesting

private struct Note: Codable, Sendable, Equatable {
    let text: String
}

extension OutboxKind where Payload == Note {
    fileprivate static let note = OutboxKind("note", lane: "notes") { note in
        Resource<Data>(.post, path: "notes", body: .json(note), decoding: .data)
    }
    /// Notes sent each on its own, in no order.
    fileprivate static let looseNote = OutboxKind("loose note") { note in
        Resource<Data>(.post, path: "notes", body: .json(note), decoding: .data)
    }
}

/// The durable outbox over the stub transport: writes on disk before `enqueue` returns, sent
/// with one key in every process, in order per lane, told once; dead letters; a damaged journal.
@Suite struct OutboxTests {
    @Test func aWriteIsOnDiskWhenEnqueueReturnsAndARelaunchSendsItOnceWithItsKey() async throws {
        try await OutboxFixtures.withFolder { folder in
            let harness = Harness { _ in .json(#"{"id": 1}"#, status: 201) }
            // The first process enqueues, and dies before it could send.
            let id = try Outbox(folder: folder, client: harness.api).enqueue(Note(text: "hello"), as: .note)

            let relaunched = try Outbox(folder: folder, client: harness.api)
            #expect(relaunched.pending.map(\.id) == [id])
            let key = try #require(relaunched.pending.first?.key)
            let told = EventLog<(Note, OutboxOutcome)>()
            relaunched.register(.note) { told.append(($0, $1)) }

            let outcome = await told.wait(for: 1).first
            #expect(outcome?.0 == Note(text: "hello"))
            #expect(outcome?.1 == .accepted(status: 201, body: Data(#"{"id": 1}"#.utf8)))
            let sent = try #require(harness.transport.arrivals.elements.first?.request)
            #expect(sent.value(forHTTPHeaderField: "Idempotency-Key") == key)
            #expect(relaunched.pending.isEmpty)
            relaunched.close()

            // A third process has nothing to send, and tells nothing again.
            let third = try Outbox(folder: folder, client: harness.api)
            third.register(.note) { told.append(($0, $1)) }
            #expect(third.pending.isEmpty && told.count == 1 && harness.transport.arrivals.count == 1)
        }
    }

    @Test func aKindSendsItsRequestWithEverythingTheAppGaveItButHowItIsRead() throws {
        struct Created: Decodable, Sendable {
            let id: Int
        }
        let kind = OutboxKind<Note>("tagged note") { note in
            Resource<Created>(.put, path: "notes/1", query: [URLQueryItem(name: "v", value: "2")], headers: ["X-App": "1"],
                              body: .json(note), acceptableStatusCodes: 200..<205, timeout: 7)
                .tagged("sync")
                .inLane("notes", onFailure: .cancelTheRest)
                .within(30)
                .retrying(.never)
                .redirecting(.never)
                .limitingResponses(to: 1_000)
                .withIdempotencyKey(false)
                .caching(.bypass)
        }

        let request = kind.request(Note(text: "a"))

        #expect(request.method == .put && request.path == "notes/1" && request.query == [URLQueryItem(name: "v", value: "2")])
        #expect(request.headers == ["X-App": "1"] && request.acceptableStatusCodes == 200..<205 && request.timeout == 7)
        #expect(request.tags == ["sync"])
        #expect(request.lane == Lane("notes", onFailure: .cancelTheRest))
        #expect(request.deadline == 30)
        #expect(request.retryPolicy?.maxAttempts == RetryPolicy.never.maxAttempts)
        #expect(request.redirectPolicy == .never)
        #expect(request.maximumResponseSize == 1_000)
        #expect(request.sendsIdempotencyKey == false)
        #expect(request.cachePolicy == .bypass)
    }

    @Test func everyTryOfAWriteCarriesItsOneKey() async throws {
        try await OutboxFixtures.withFolder { folder in
            let tries = Counter()
            let harness = Harness { _ in [.serverError(503), .lostConnection, .json("{}", status: 201)][min(2, tries.next() - 1)] }
            let answers = EventLog<Int>()
            let outbox = try Outbox(folder: folder, client: harness.api, configuration: OutboxFixtures.quick)
            outbox.register(.note) { _, outcome in
                if case .accepted(let status, _) = outcome { answers.append(status) }
            }

            try outbox.enqueue(Note(text: "again"), as: .note)

            #expect(await answers.wait(for: 1) == [201])
            let keys = Set(harness.transport.arrivals.elements.map { $0.request.value(forHTTPHeaderField: "Idempotency-Key") })
            #expect(harness.transport.arrivals.count == 3)
            #expect(keys.count == 1 && keys.first != nil)
        }
    }

    @Test func theWritesOfALaneGoOneAtATimeInTheOrderTheyWereEnqueued() async throws {
        try await OutboxFixtures.withFolder { folder in
            let harness = Harness { _ in .hold }
            let outbox = try Outbox(folder: folder, client: harness.api)
            let told = EventLog<String>()
            outbox.register(.note) { note, _ in told.append(note.text) }
            for text in ["first", "second", "third"] { try outbox.enqueue(Note(text: text), as: .note) }
            await harness.transport.arrivals.wait(for: 1)

            for count in 1...3 {
                #expect(harness.transport.arrivals.count == count, "the next waits for the outcome of the one before")
                #expect(harness.transport.release(with: .json("{}", status: 201)))
                await told.wait(for: count)
                if count < 3 { await harness.transport.arrivals.wait(for: count + 1) }
            }

            let bodies = harness.transport.arrivals.elements.map { $0.body.flatMap { try? JSONDecoder().decode(Note.self, from: $0) }?.text }
            #expect(bodies == ["first", "second", "third"])
            #expect(told.elements == ["first", "second", "third"])
        }
    }

    @Test func aWriteRefusedForGoodIsADeadLetterThatLeavesItsLaneAndCanBeDropped() async throws {
        try await OutboxFixtures.withFolder { folder in
            let harness = Harness { request in
                let note = request.httpBody.flatMap { try? JSONDecoder().decode(Note.self, from: $0) }
                return note?.text == "poison" ? .json(#"{"message": "text too long"}"#, status: 422) : .json("{}", status: 201)
            }
            var outbox: Outbox? = try Outbox(folder: folder, client: harness.api)
            let told = EventLog<OutboxOutcome>()
            outbox?.register(.note) { _, outcome in told.append(outcome) }

            let poison = try #require(try outbox?.enqueue(Note(text: "poison"), as: .note))
            try outbox?.enqueue(Note(text: "fine"), as: .note)

            #expect(await told.wait(for: 2) == [.rejected(status: 422, reason: "text too long"), .accepted(status: 201, body: Data("{}".utf8))])
            #expect(outbox?.deadLetters.map(\.entry.id) == [poison])
            outbox?.close()
            outbox = nil

            // Kept across a relaunch, until dropped.
            var relaunched: Outbox? = try Outbox(folder: folder, client: harness.api)
            #expect(relaunched?.deadLetters.map(\.entry.id) == [poison])
            try relaunched?.drop(poison)
            #expect(relaunched?.deadLetters.isEmpty == true)
            relaunched?.close()
            relaunched = nil
            #expect(try Outbox(folder: folder, client: harness.api).deadLetters.isEmpty)
        }
    }

    @Test func theJournalIsCompactedAsWritesAreToldSoThatItDoesNotGrowWithHistory() async throws {
        try await OutboxFixtures.withFolder { folder in
            let harness = Harness { _ in .json("{}", status: 201) }
            let outbox = try Outbox(folder: folder, client: harness.api)
            let told = EventLog<Void>()
            outbox.register(.looseNote) { _, _ in told.append(()) }

            for index in 0..<1_200 { try outbox.enqueue(Note(text: "note \(index)"), as: .looseNote) }
            await told.wait(for: 1_200)

            // Three records a write (enqueued, finished, told) would be 3,600 without compaction.
            let records = OutboxJournal.decode(try Data(contentsOf: folder.appendingPathComponent("outbox.journal"))).records
            #expect(records.count < 1_000, "\(records.count) records")
            #expect(outbox.pending.isEmpty)
            outbox.close()
        }
    }

    @Test func anAppWatchesItsWritesGoFromWaitingToSendingToGone() async throws {
        try await OutboxFixtures.withFolder { folder in
            let harness = Harness { _ in .hold }
            let outbox = try Outbox(folder: folder, client: harness.api)
            let seen = EventLog<[OutboxWriteState.Phase]>()
            let watching = Task {
                for await writes in outbox.changes() { seen.append(writes.map(\.phase)) }
            }
            await seen.wait(for: 1)
            try outbox.enqueue(Note(text: "watched"), as: .note)

            // Waiting until its kind is registered, then sending, then gone once told.
            while !seen.elements.contains([.waiting]) { await seen.wait(for: seen.count + 1) }
            outbox.register(.note) { _, _ in }
            while !seen.elements.contains([.sending]) { await seen.wait(for: seen.count + 1) }
            await harness.transport.arrivals.wait(for: 1)
            #expect(harness.transport.release(with: .json("{}", status: 201)))
            while seen.elements.last != [] { await seen.wait(for: seen.count + 1) }

            #expect(seen.elements.first == [])
            outbox.close()
            await watching.value
        }
    }

    @Test func offlineAWriteWaitsInTheSchedulerAndGoesWhenTheNetworkReturns() async throws {
        try await OutboxFixtures.withFolder { folder in
            let connectivity = StubConnectivity(connected: false)
            let harness = Harness(connectivity: connectivity) { _ in .json("{}", status: 201) }
            let outbox = try Outbox(folder: folder, client: harness.api)
            let told = EventLog<OutboxOutcome>()
            outbox.register(.note) { _, outcome in told.append(outcome) }

            try outbox.enqueue(Note(text: "offline"), as: .note)

            // Handed to the scheduler, which holds it while offline: not sent, not failed.
            #expect(await harness.events.enqueued.wait(for: 1).count == 1)
            #expect(harness.scheduler.state.withLock { $0.machine.lineCounts.waiting } == 1)
            #expect(harness.transport.arrivals.count == 0 && told.count == 0)

            connectivity.set(connected: true)

            #expect(await told.wait(for: 1) == [.accepted(status: 201, body: Data("{}".utf8))])
            outbox.close()
        }
    }

    @Test func aDamagedJournalRecordIsReportedAndTheOthersReplayed() async throws {
        try await OutboxFixtures.withFolder { folder in
            let harness = Harness { _ in .hold }
            let outbox = try Outbox(folder: folder, client: harness.api)
            try outbox.enqueue(Note(text: "damaged"), as: .note)
            let kept = try outbox.enqueue(Note(text: "kept"), as: .note)
            let file = folder.appendingPathComponent("outbox.journal")
            var bytes = try Data(contentsOf: file)
            bytes[40] ^= 0x20 // inside the first record
            try bytes.write(to: file)

            outbox.close()
            let relaunched = try Outbox(folder: folder, client: harness.api)

            #expect(relaunched.damagedRecords == 1)
            #expect(relaunched.pending.map(\.id) == [kept])
        }
    }

    @Test func aWholeRecordThatIsNoEventIsReportedAsDamageAndSkipped() async throws {
        try await OutboxFixtures.withFolder { folder in
            let harness = Harness { _ in .hold }
            let kept: UUID
            do {
                let outbox = try Outbox(folder: folder, client: harness.api)
                kept = try outbox.enqueue(Note(text: "kept"), as: .note)
                outbox.close()
            }
            // A record a newer version might write: whole, checked, but no event of this one.
            let journal = try OutboxJournal(file: folder.appendingPathComponent("outbox.journal"))
            try journal.append(Data(#"{"migrated": {"id": 1}}"#.utf8))
            journal.close()

            let relaunched = try Outbox(folder: folder, client: harness.api)

            #expect(relaunched.damagedRecords == 1)
            #expect(relaunched.pending.map(\.id) == [kept])
            relaunched.close()
        }
    }

    @Test func aFullOutboxRefusesTheWriteUnwritten() async throws {
        try await OutboxFixtures.withFolder { folder in
            let harness = Harness { _ in .hold }
            var configuration = Outbox.Configuration()
            configuration.maximumWrites = 1
            do {
                let outbox = try Outbox(folder: folder, client: harness.api, configuration: configuration)
                try outbox.enqueue(Note(text: "one"), as: .note)

                #expect(throws: ServiceError.invalidRequest(reason: "the outbox holds its 1 writes: it is full")) {
                    try outbox.enqueue(Note(text: "two"), as: .note)
                }
                outbox.close()
            }
            #expect(try Outbox(folder: folder, client: harness.api).pending.count == 1)
        }
    }

    @Test func writesEnqueuedAtOnceNeverPassTheOutboxsBound() async throws {
        try await OutboxFixtures.withFolder { folder in
            let harness = Harness { _ in .hold }
            var configuration = Outbox.Configuration()
            configuration.maximumWrites = 10
            let outbox = try Outbox(folder: folder, client: harness.api, configuration: configuration)

            let accepted = await withTaskGroup(of: Bool.self) { group in
                for index in 0..<64 {
                    group.addTask { (try? outbox.enqueue(Note(text: "\(index)"), as: .looseNote)) != nil }
                }
                return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }

            #expect(accepted == 10)
            #expect(outbox.pending.count == 10)
            outbox.close()
        }
    }

    @Test func aSecondOutboxOnTheSameFolderInOneProcessIsRefused() async throws {
        try await OutboxFixtures.withFolder { folder in
            let harness = Harness { _ in .hold }
            let outbox = try Outbox(folder: folder, client: harness.api)

            #expect(throws: ServiceError.invalidRequest(reason: "outbox.journal is open already in this process")) {
                _ = try Outbox(folder: folder, client: harness.api)
            }
            withExtendedLifetime(outbox) {}
        }
    }
}
