import Foundation
import Testing
@testable import NetworkScheduler
@testable import NetworkSchedulerOutbox
import NetworkSchedulerTesting

/// The outbox's journal: records written whole before `append` returns, read back checked, so
/// that a crash mid-write or a flipped bit costs the damaged record and nothing else.
@Suite struct OutboxJournalTests {
    private static func withJournal(_ body: (OutboxJournal) throws -> Void) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("OutboxJournalTests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try body(try OutboxJournal(file: folder.appendingPathComponent("outbox.journal")))
    }

    private static func records(_ texts: String...) -> [Data] { texts.map { Data($0.utf8) } }

    @Test func recordsAreReadBackWholeAndInOrder() throws {
        try Self.withJournal { journal in
            for record in Self.records("first", "", "third") { try journal.append(record) }

            let contents = try journal.read()
            #expect(contents == OutboxJournal.Contents(records: Self.records("first", "", "third"), damaged: []))
        }
    }

    @Test func aRecordTornByACrashIsReportedAndTheNextAppendIsReadAfterIt() throws {
        try Self.withJournal { journal in
            try journal.append(Data("kept".utf8))
            // A crash in the middle of writing the second record.
            let torn = OutboxJournal.encode(Data("lost in the crash".utf8)).prefix(20)
            let file = try FileHandle(forWritingTo: journal.file)
            try file.seekToEnd()
            try file.write(contentsOf: torn)
            try file.close()

            try journal.append(Data("after the relaunch".utf8))

            let contents = try journal.read()
            #expect(contents.records == Self.records("kept", "after the relaunch"))
            #expect(contents.damaged == [20..<40], "the 20 bytes of the torn record, after the 20 of the first")
        }
    }

    @Test func aFlippedBitCostsItsRecordAndNoOther() throws {
        try Self.withJournal { journal in
            for record in Self.records("one", "two", "three") { try journal.append(record) }
            var bytes = try Data(contentsOf: journal.file)
            bytes[16 + 3 + 16 + 1] ^= 0x04 // a bit of "two"
            try bytes.write(to: journal.file)

            let contents = try journal.read()

            #expect(contents.records == Self.records("one", "three"))
            #expect(contents.damaged.count == 1)
        }
    }

    @Test func aLengthThatPointsPastTheEndIsDamageNotARead() {
        var record = OutboxJournal.encode(Data("short".utf8))
        record.replaceSubrange(4..<8, with: [0xFF, 0xFF, 0xFF, 0x7F])

        let contents = OutboxJournal.decode(record + OutboxJournal.encode(Data("next".utf8)))

        #expect(contents.records == Self.records("next"))
        #expect(contents.damaged == [0..<21])
    }

    @Test func compactionKeepsWhatIsLeftAndAppendingGoesOn() throws {
        try Self.withJournal { journal in
            for record in Self.records("sent", "pending", "sent too") { try journal.append(record) }

            try journal.compact { Self.records("pending") }
            try journal.append(Data("new".utf8))

            let contents = try journal.read()
            #expect(contents == OutboxJournal.Contents(records: Self.records("pending", "new"), damaged: []))
            #expect(!FileManager.default.fileExists(atPath: journal.file.appendingPathExtension("compacting").path))
        }
    }

    @Test func aRecordOverTheLimitIsRefusedUnwritten() throws {
        try Self.withJournal { journal in
            let huge = Data(count: OutboxJournal.maximumRecordSize + 1)

            #expect(throws: ServiceError.invalidRequest(
                reason: "a journal record of \(huge.count) bytes is over the \(OutboxJournal.maximumRecordSize) allowed")) {
                try journal.append(huge)
            }
            let contents = try journal.read()
            #expect(contents.records.isEmpty)
        }
    }

    /// Truncations and bit flips of a journal, 500 of them from one seed: reading never
    /// crashes, and never yields a record that was not appended, nor two out of order.
    @Test(arguments: [UInt64(1), 2, 3, 4]) func damageNeverReadsAsSomethingElse(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        for _ in 0..<125 {
            // Records of any bytes, some holding the mark itself.
            let originals: [Data] = (0..<Int.random(in: 1...12, using: &random)).map { index in
                var bytes = (0..<Int.random(in: 0...64, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
                if index % 3 == 0 { bytes.insert(contentsOf: Array("NSJ1".utf8), at: bytes.count / 2) }
                return Data(bytes)
            }
            var file = originals.reduce(into: Data()) { $0.append(OutboxJournal.encode($1)) }
            if Bool.random(using: &random) { file = file.prefix(Int.random(in: 0...file.count, using: &random)) }
            for _ in 0..<Int.random(in: 0...3, using: &random) where !file.isEmpty {
                file[Int.random(in: 0..<file.count, using: &random)] ^= UInt8(1 << Int.random(in: 0..<8, using: &random))
            }

            let contents = OutboxJournal.decode(file)

            var next = 0
            for record in contents.records {
                guard let index = originals[next...].firstIndex(of: record) else {
                    Issue.record("seed \(seed): read a record that was not appended, or out of order")
                    return
                }
                next = index + 1
            }
        }
    }
}
