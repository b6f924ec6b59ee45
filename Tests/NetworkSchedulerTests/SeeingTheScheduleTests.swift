// The code of the DocC article "Seeing the Schedule", as written there.
// `theArticleShowsThisFilesCodeAsWritten` fails when the two differ.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NetworkScheduler
import NetworkSchedulerTesting
import NetworkSchedulerTimeline
import Testing

@Suite struct SeeingTheScheduleTests {
    @Test func theArticlesRecorderListensToItsScheduler() {
        let recorder = ScheduleRecorder()
        let scheduler = RequestScheduler { $0.eventMonitors.append(recorder) }
        let api = APIClient(baseURL: URL(string: "https://api.example.com/v1")!, scheduler: scheduler)

        #expect(api.scheduler.configuration.eventMonitors.contains { $0 as? ScheduleRecorder === recorder })
    }

    @Test func theArticlesRunIsWrittenAsAPictureAndATrace() async throws {
        let clock = VirtualClock()
        let recorder = ScheduleRecorder(clock: clock)
        let scheduler = RequestScheduler {
            $0.clock = clock
            $0.transport = StubTransport()
            $0.eventMonitors.append(recorder)
        }
        let api = APIClient(baseURL: URL(string: "https://api.test/v1")!, scheduler: scheduler)
        async let first: Void = api.value(for: Resource<Void>(path: "ping"))
        async let second: Void = api.value(for: Resource<Void>(path: "pong"))
        _ = try await (first, second)

        let timeline = recorder.timeline()
        let folder = FileManager.default.temporaryDirectory
        try timeline.svg().write(to: folder.appendingPathComponent("schedule.svg"), atomically: true, encoding: .utf8)
        try timeline.traceEvents().write(to: folder.appendingPathComponent("schedule.json"))
        print("\(timeline.callCount) calls, \(timeline.sharedCallerCount) callers joined one, in \(timeline.duration) s")

        #expect(timeline.callCount == 2)
        let svg = try String(contentsOf: folder.appendingPathComponent("schedule.svg"), encoding: .utf8)
        #expect(svg.contains("GET /v1/ping") && svg.contains("GET /v1/pong"))
        let trace = try JSONSerialization.jsonObject(with: Data(contentsOf: folder.appendingPathComponent("schedule.json")))
        #expect((trace as? [String: Any])?["traceEvents"] is [Any])
    }

    @Test func theArticleShowsThisFilesCodeAsWritten() throws {
        try expectArticle("SeeingTheSchedule", of: "NetworkSchedulerTimeline", blocks: 3, indentation: 8)
    }
}
