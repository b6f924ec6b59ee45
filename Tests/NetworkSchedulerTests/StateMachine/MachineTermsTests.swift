import Foundation
@testable import NetworkScheduler
@testable import NetworkSchedulerMachine

import Testing

/// The machine over values that are not HTTP at all: it schedules a request by its
/// ``SchedulingTerms`` alone, hands back what it was given, and makes only the outcomes it
/// decides itself (``CallOutcome``).
@Suite struct MachineTermsTests {
    /// A request that is only its terms, and a name to tell it apart.
    struct Job: SchedulingTerms, Equatable {
        typealias Key = String
        let name: String
        var origin = "worker://a"
        var hostName: String? = "a"
        var opensStream = false
        var lane: Lane?
        var attemptTimeout: Seconds = 60
        var runsOnWithoutCallers = false
    }

    enum JobEnd: CallOutcome, Equatable {
        case done(Int)
        case attemptTimedOut
        case callerDeadlinePassed
        case lineFull(host: String)
    }

    typealias Machine = SchedulerMachine<String, Job, JobEnd>

    private var machine = Machine(id: MachineID(value: 1), budget: 1, lowPriorityBudget: 1, lineLimit: 1, jitterSeed: 1)
    private let now: UInt64 = 1_000_000_000
    private var lastNumber: UInt64 = 0

    private mutating func submit(_ job: Job, key: String? = nil, within deadline: Seconds? = nil) -> (Machine.Attachment, Machine.Actions) {
        lastNumber += 1
        let (_, attachment, actions) = machine.submit(job.name, number: lastNumber, priority: .normal, request: job, key: key,
                                                      within: deadline, now: now)
        return (attachment, actions)
    }

    /// The machine is a value: a copy is a machine of its own, and what happens in it leaves
    /// the original as it was, down to a call shared by two callers.
    @Test mutating func aCopyOfTheMachineIsAMachineOfItsOwn() throws {
        let (first, _) = submit(Job(name: "a1"), key: "a")
        let (second, _) = submit(Job(name: "a1"), key: "a")
        guard case .created(let call) = first, case .joined(call, _) = second else {
            throw Failure("expected a call and a joiner, got \(first) and \(second)")
        }
        let succeeded = AttemptReading.verdict(AttemptVerdict(kind: .succeeded, retry: nil))

        var copy = machine
        let (_, endedInCopy) = copy.attemptEnded(AttemptID(call: call, serial: 1), with: .done(1), succeeded, now: now)
        #expect(endedInCopy.unlocked.deliveries.map(\.outcome) == [.done(1), .done(1)])
        #expect(copy.census == (callers: 0, calls: 0, registered: 0))

        #expect(machine.census == (callers: 2, calls: 1, registered: 1), "the original still has its call and its callers")
        let (_, ended) = machine.attemptEnded(AttemptID(call: call, serial: 1), with: .done(2), succeeded, now: now)
        #expect(ended.unlocked.deliveries.map(\.outcome) == [.done(2), .done(2)], "and its call is still on the wire")
    }

    @Test mutating func itLinesUpJobsByTheirOriginAndDeliversWhatTheyEndedWith() throws {
        let (first, started) = submit(Job(name: "a1"))
        let (_, waiting) = submit(Job(name: "a2"))
        let (_, elsewhere) = submit(Job(name: "b1", origin: "worker://b", hostName: "b"))
        guard case .created(let firstCall) = first else { throw Failure("expected a new call, got \(first)") }

        #expect(started.locked.starts.map(\.request.name) == ["a1"])
        #expect(waiting.locked.starts.count == 0, "one slot per origin: a2 waits behind a1")
        #expect(elsewhere.locked.starts.map(\.request.name) == ["b1"], "another origin has a slot of its own")

        let (_, ended) = machine.attemptEnded(AttemptID(call: firstCall, serial: 1), with: .done(7),
                                              .verdict(AttemptVerdict(kind: .succeeded, retry: nil)), now: now)

        #expect(ended.locked.starts.map(\.request.name) == ["a2"])
        #expect(ended.unlocked.deliveries.map(\.outcome) == [.done(7)])
        #expect(ended.unlocked.deliveries.map(\.servedBy?.request) == [Job(name: "a1")])
    }

    @Test mutating func theOutcomesItDecidesItselfAreMadeByTheOutcomeType() throws {
        let (first, _) = submit(Job(name: "a1", attemptTimeout: 1))
        _ = submit(Job(name: "a2"), within: 0.5)
        // The line holds one call: the third is shed.
        let (_, shed) = submit(Job(name: "a3"))
        guard case .created(let firstCall) = first else { throw Failure("expected a new call, got \(first)") }

        #expect(shed.unlocked.deliveries.map(\.outcome) == [.lineFull(host: "worker://a")])

        let (_, late) = machine.timerFired(now: now + 500_000_000)
        #expect(late.unlocked.deliveries.map(\.outcome) == [.callerDeadlinePassed])

        let (expired, _) = machine.timerFired(now: now + 1_000_000_000)
        #expect(expired.expired.map(\.attempt) == [AttemptID(call: firstCall, serial: 1)])
        let wanted: [JobEnd] = expired.expired.compactMap {
            guard case .verdictWanted(let wanted) = $0.followUp else { return nil }
            return wanted.outcome
        }
        #expect(wanted == [.attemptTimedOut])
    }

    @Test mutating func jobsWithEqualKeysShareOneCallWhateverTheKeysType() throws {
        // Keys built at run time: equal values, not one instance.
        let (first, _) = submit(Job(name: "a1"), key: ["k", "1"].joined())
        let (second, _) = submit(Job(name: "a2"), key: String("k1".reversed().reversed()))
        let (third, _) = submit(Job(name: "a3"), key: "k2")
        guard case .created(let firstCall) = first else { throw Failure("expected a new call, got \(first)") }

        #expect(second == .joined(firstCall, lastStep: nil))
        #expect(third.call != firstCall, "another key makes another call")
    }

    /// The layer the compiler keeps apart: the machine is a module of its own, which the
    /// scheduler's module depends on and not the other way round, so that its code cannot name a
    /// type of the scheduler's (a request, an answer, an error, a header). That it imports
    /// nothing else, Foundation included, is read here, as text: the build would not notice.
    @Test func theMachinesModuleImportsNothing() throws {
        let folder = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/NetworkSchedulerMachine")
        let files = try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "swift" }
        #expect(files.count >= 20, "the machine's files were not found at \(folder.path)")
        for file in files {
            let imports = try String(contentsOf: file, encoding: .utf8).split(separator: "\n")
                .filter { $0.hasPrefix("import ") || $0.hasPrefix("@_exported import ") || $0.hasPrefix("@testable import ") }
            #expect(imports.isEmpty, "\(file.lastPathComponent): \(imports)")
        }
    }

    private struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
