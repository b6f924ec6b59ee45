import Dispatch
import Foundation
import NetworkScheduler
import Synchronization

/// Scenario 8: the rate limiter, without sockets. Its cost: `requests` distinct GETs through
/// the stub under a limit that never binds (its bucket refilled and drawn on every start),
/// against none, side by side. Its pacing: `pacedRequests` GETs sent at once under a binding
/// limit, whose starts must spread at the limit's rate after its burst.
struct RateLimiting {
    /// The limit the pacing runs under.
    static let paced = HostHealth.RateLimit(requestsPerSecond: 500, burst: 50)

    let requests: Int
    let pacedRequests: Int

    /// `requests` GETs through a scheduler with `limit` on the stub's host, or none.
    func cost(limit: HostHealth.RateLimit?) async -> Cost {
        let api = Self.client(limit: limit, monitor: nil)
        return await measure(count: requests) { done in
            for index in 0..<requests {
                api.send(Resource<User>(path: "/users/\(index)")) { result in
                    precondition((try? result.get()) != nil, "a stubbed request failed")
                    done()
                }
            }
        }
    }

    /// The starts of `pacedRequests` GETs sent at once under ``paced``: the rate they reached
    /// after the burst, and the most that started within any one second.
    func pacing() async -> (perSecond: Double, busiestSecond: Int) {
        let starts = StartTimes()
        let api = Self.client(limit: Self.paced, monitor: starts)
        _ = await measure(count: pacedRequests, timeout: 60) { done in
            for index in 0..<pacedRequests {
                api.send(Resource<User>(path: "/users/\(index)")) { _ in done() }
            }
        }
        let times = starts.sorted
        precondition(times.count == pacedRequests, "not every request started")
        let paced = Double(times.count - Self.paced.burst)
        let perSecond = paced / (Double(times.last! - times.first!) / 1e9)
        var busiest = 0
        var windowStart = 0
        for (index, time) in times.enumerated() {
            while time - times[windowStart] >= 1_000_000_000 { windowStart += 1 }
            busiest = max(busiest, index - windowStart + 1)
        }
        return (perSecond, busiest)
    }

    private static func client(limit: HostHealth.RateLimit?, monitor: (any RequestEvent.Monitor)?) -> APIClient {
        let transport = StubTransport(body: SchedulingCost.body)
        let scheduler = RequestScheduler { configuration in
            configuration.transport = transport
            if let limit { configuration.rateLimits = ["stub.invalid": limit] }
            if let monitor { configuration.eventMonitors = [monitor] }
        }
        return APIClient(baseURL: URL(string: "http://stub.invalid")!, scheduler: scheduler)
    }
}

/// When each network call started.
private final class StartTimes: RequestEvent.Monitor {
    private let times = Mutex<[UInt64]>([])

    func record(_ event: RequestEvent) {
        guard case .started = event else { return }
        let time = now()
        times.withLock { $0.append(time) }
    }

    var sorted: [UInt64] { times.withLock { $0.sorted() } }
}
