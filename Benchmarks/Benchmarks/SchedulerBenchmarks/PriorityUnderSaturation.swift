import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NetworkScheduler
import SocialServer
import Synchronization

/// Scenario 5: `lowRequests` low-priority feed pages (the server takes `lowLatency` ms over
/// each) fill the queue; then high-priority profile requests are sent one after another while
/// the lows still wait. Each high's queue wait is compared with a low's time on the wire.
struct PriorityUnderSaturation {
    struct Result {
        let highQueueWaits: [Double]
        let lowWireTimes: [Double]
        /// Lows not yet sent when the last high ended: proof the queue stayed saturated.
        let lowsWaitingAtEnd: Int
    }

    let lowRequests: Int
    let highRequests: Int
    let lowLatencyMilliseconds: Int

    func run() async throws -> Result {
        // In this process: the scenario sets the server's latency.
        let server = try await SocialServer.start()
        defer { Task { await server.stop() } }
        server.faults[.feed] = .latency(milliseconds: lowLatencyMilliseconds)
        let session = Loopback.session()
        defer { session.finishTasksAndInvalidate() }
        let lowWireTimes = WireTimes()
        let scheduler = RequestScheduler {
            $0.transport = URLSessionTransport(session: session)
            $0.eventMonitors = [lowWireTimes]
        }
        let token = try await Loopback.logIn(at: server.baseURL)
        let api = APIClient(baseURL: server.baseURL, scheduler: scheduler, bearerToken: { token })

        let lowsDone = Countdown(lowRequests)
        for page in 0..<lowRequests {
            let feed = Resource<Data>(path: "/feed", query: [URLQueryItem(name: "page", value: "\(page)")], decoding: .data)
            api.send(feed, priority: .low) { _ in lowsDone.tick() }
        }
        var highQueueWaits: [Double] = []
        for index in 0..<highRequests {
            let user = Resource<User>(path: "/users/\(1 + index % 3)", deduplication: .disabled)
            let response = try await api.reply(for: user, priority: .high)
            highQueueWaits.append(response.metrics.queuedDuration)
        }
        let lowsWaiting = max(0, lowRequests - server.arrivals.count(.feed))
        let finished = await lowsDone.wait(timeout: 120)
        precondition(finished, "the low-priority requests did not finish within 120 s")
        return Result(highQueueWaits: highQueueWaits, lowWireTimes: lowWireTimes.samples.values, lowsWaitingAtEnd: lowsWaiting)
    }
}

/// The wire time of each low-priority caller that succeeded, as its event tells it.
final class WireTimes: RequestEvent.Monitor {
    let samples = Samples()

    func record(_ event: RequestEvent) {
        if case let .succeeded(caller, metrics) = event, caller.priority == .low {
            samples.append(metrics.networkDuration)
        }
    }
}

/// Values appended from any thread.
final class Samples: Sendable {
    private let storage = Mutex<[Double]>([])

    func append(_ value: Double) {
        storage.withLock { $0.append(value) }
    }

    var values: [Double] { storage.withLock { $0 } }
}
