import NIOConcurrencyHelpers

/// Every request that reached a route, in order: what tests count to prove a call was, or was
/// not, sent.
public final class ArrivalLog: Sendable {
    /// One request as it arrived.
    public struct Arrival: Codable, Sendable, Equatable {
        public let route: Route
        /// The path and query, such as `/feed?page=2`.
        public let target: String
    }

    private let arrivals = NIOLockedValueBox<[Arrival]>([])

    /// Every arrival so far, oldest first.
    public var all: [Arrival] { arrivals.withLockedValue { $0 } }

    /// How many requests reached each route.
    public var counts: [Route: Int] {
        arrivals.withLockedValue { arrivals in
            arrivals.reduce(into: [:]) { counts, arrival in counts[arrival.route, default: 0] += 1 }
        }
    }

    /// How many requests reached `route`.
    public func count(_ route: Route) -> Int {
        arrivals.withLockedValue { $0.count { $0.route == route } }
    }

    func record(_ route: Route, target: String) {
        arrivals.withLockedValue { $0.append(Arrival(route: route, target: target)) }
    }
}
