import Foundation
import NetworkScheduler
import Synchronization

/// Counts the callers a scheduler admitted (new calls and joiners) whose path starts with a
/// prefix: the demo's gate for holding the API's answers until every client has reached the
/// gateway, however busy the machine.
final class Admissions: RequestEvent.Monitor {
    private let prefix: String
    private let count = Mutex(0)

    init(ofPathsStartingWith prefix: String) {
        self.prefix = prefix
    }

    func record(_ event: RequestEvent) {
        switch event {
        case .enqueued(let caller), .joined(let caller):
            if caller.url?.path.hasPrefix(prefix) == true { count.withLock { $0 += 1 } }
        default:
            break
        }
    }

    /// Waits until `target` callers were admitted, or `seconds` have passed; returns how many were.
    func wait(for target: Int, within seconds: Double) async -> Int {
        let limit = ContinuousClock.now + .seconds(seconds)
        while count.withLock({ $0 }) < target, ContinuousClock.now < limit {
            try? await Task.sleep(for: .milliseconds(2))
        }
        return count.withLock { $0 }
    }
}
