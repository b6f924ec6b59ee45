import ChaosSoak
import Foundation
import Testing

/// CI's run of the chaos soak: 10,000 callers, two seeds, plain and under the thread sanitizer.
/// `SOAK_CALLERS` sets another count.
@Suite struct ChaosSoakTests {
    static let callers = ProcessInfo.processInfo.environment["SOAK_CALLERS"].flatMap(Int.init) ?? 10_000

    @Test(arguments: [1, 2] as [UInt64])
    func everyCallerEndsExactlyOnceAndEverySchedulerIsLeftIdle(seed: UInt64) async {
        let report = await Soak.run(SoakConfiguration(callers: Self.callers, seed: seed))
        print(report)
        #expect(report.lost == 0, "\(report)")
        #expect(report.twice == 0, "\(report)")
        #expect(report.allEndedOnceQuiet, "\(report)")
        #expect(report.isIdle, "\(report)")
        #expect(report.heardEveryCaller, "\(report)")
        #expect(report.crossedUsers == 0, "\(report)")
        #expect(report.outboxDisagreement == nil, "\(report)")
        #expect(report.forbiddenAnswers == 0 && report.answeredWithOptions > 0, "\(report)")
        #expect(report.files.wrong == 0 && report.files.saved > 0, "\(report)")
        #expect(report.transportsShutDown.notIdle == 0 && report.transportsShutDown.closed > 0, "\(report)")
        #expect(report.outboxState.taps > 0 && !report.outboxState.presence.isEmpty, "the outbox's writes reached the server")
        #expect(report.outcomes["success", default: 0] > 0 && report.outcomes.count > 5, "the chaos reached the callers: \(report)")
    }
}
