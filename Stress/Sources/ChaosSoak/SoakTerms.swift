import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NetworkScheduler

/// The soak's checks that each caller gets what it asked for:
/// - identical requests sent with other options at once (a redirect it would not follow, a
///   size limit, a timeout, a retry policy), some sharing a call and some not: none may get an
///   answer its own options forbid (the other origin's answer, or a body past its limit);
/// - downloads from a server whose file changes version between attempts, whose ranges omit
///   the total (`*`), which cuts bodies short and sometimes answers a resume with a part of
///   another version: every file saved must be one whole version;
/// - a scheduler whose transport is shut down mid-run, again and again: its callers end once,
///   and it is left idle.
final class SoakTerms: Sendable {
    /// Answers a caller's own options forbid: must be 0.
    let forbidden = Mutex(0)
    /// Callers of the identical requests with options that got an answer, for the report.
    let answered = Mutex(0)
    /// Downloads that succeeded with a file that is not one whole version: must be 0.
    let wrongFiles = Mutex(0)
    /// Downloads that succeeded with one whole version.
    let savedFiles = Mutex(0)
    /// Transports shut down, and those whose scheduler still held something once its callers
    /// had had time to end: must be 0.
    let closings = Mutex((closed: 0, notIdle: 0))

    private let random: SeededRandom

    init(random: SeededRandom) {
        self.random = random
    }

    // MARK: - Identical requests with other options

    /// A request another caller may be sending at the same moment, with options of its own.
    func launchCallerWithOptions(number: Int, client: APIClient, ledger: Ledger) {
        let isMoved = random.chance(50)
        var resource = Resource<Item>(path: isMoved ? "moved" : "big")
        var redirects = TransportPolicy.Redirects.follow
        if random.chance(50) {
            redirects = random.pick([.follow, .sameOrigin, .never])
            resource = resource.redirecting(redirects)
        }
        let limit = random.chance(40) ? 1_000 : nil
        if let limit { resource = resource.limitingResponses(to: limit) }
        if random.chance(30) { resource.timeout = random.pick([0.2, 0.5, 1]) }
        if random.chance(30) { resource = resource.retrying(random.pick([.never, .default])) }
        client.send(resource) { [self, redirects] result in
            if case .success(let item) = result {
                answered.withLock { $0 += 1 }
                // The other origin's answer, to a caller that would not follow it there; or a body
                // past the caller's limit (the big answer is about 2 KB).
                let isForbidden = (item.name == ChaosTransport.elsewhere && redirects != .follow)
                    || (limit != nil && item.name.utf8.count > 1_000)
                if isForbidden { forbidden.withLock { $0 += 1 } }
            }
            ledger.end(number, outcomeKind(result))
        }
    }

    // MARK: - Downloads

    /// Whether the file at `url` is one whole version of the export; counted either way.
    func checkSaved(_ url: URL) {
        guard let data = try? Data(contentsOf: url), let first = data.first,
              ExportVersions.body(of: Int(first)) == data else {
            wrongFiles.withLock { $0 += 1 }
            return
        }
        savedFiles.withLock { $0 += 1 }
    }

    // MARK: - Transports shut down

    /// A transport shut down mid-run: `retired` is its scheduler, checked for idleness later.
    func closed() {
        closings.withLock { $0.closed += 1 }
    }

    /// Checks a scheduler whose transport was shut down a while ago: it must hold nothing.
    func check(retired scheduler: RequestScheduler) {
        let census = scheduler.census
        let isIdle = census.callers == 0 && census.networkCalls == 0 && census.registeredKeys == 0
        if !isIdle { closings.withLock { $0.notIdle += 1 } }
    }
}

/// The export's versions: each a body of its own byte and length, so that a file of two
/// versions, or of a part of one, is told at once.
enum ExportVersions {
    static let all = [1, 2, 3]

    static func body(of version: Int) -> Data {
        Data(repeating: UInt8(version), count: 16_384 + version)
    }

    static func tag(of version: Int) -> String { "\"v\(version)\"" }
}
