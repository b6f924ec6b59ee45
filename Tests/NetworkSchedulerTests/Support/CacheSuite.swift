import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import NetworkScheduler
import NetworkSchedulerTesting

/// Cases of the HTTP Caching Tests suite (http-tests/cache-tests), ported as data: each is a
/// list of requests to one URL, with what the server answers and what the client must see.
/// A runner plays them through a scheduler with a cache, over a stub server that answers
/// conditional requests as the suite's server does, on a virtual clock.
struct CacheCase: Sendable {
    /// The suite's own ID for the case, so that it can be found there.
    let id: String
    /// Whether the suite requires it (`required`), or only calls it optimal or a check.
    var isRequired = true
    let steps: [Step]

    /// What the client must see of a request.
    enum Expectation: Sendable, Equatable {
        /// Answered from the cache: the server saw nothing.
        case cached
        /// The server saw the request.
        case notCached
        /// The server saw it with `If-None-Match`.
        case etagValidated
        /// The server saw it with `If-Modified-Since`.
        case lastModifiedValidated
    }

    /// A field's value: text, or a date `seconds` from the moment the server answers.
    enum Value: Sendable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral {
        case text(String)
        case date(Int)
        init(stringLiteral value: String) { self = .text(value) }
        init(integerLiteral value: Int) { self = .date(value) }
    }

    struct Step: Sendable {
        var method = "GET"
        var requestFields: [(String, String)] = []
        var status = 200
        var responseFields: [(String, Value)] = []
        /// The server drops the connection instead of answering.
        var disconnect = false
        /// The cache policy the request is sent with (the suite's `cache: 'no-cache'` is `.revalidate`).
        var policy = CachePolicy.useCache
        /// Seconds of the virtual clock after the answer (the suite's pause is 3 s).
        var pauseAfter: TimeInterval = 0
        var expected: Expectation?
        var expectedStatus: Int?
        var expectedResponseFields: [(String, String)] = []
        var expectedResponseFieldsMissing: [String] = []
        var expectedRequestFields: [(String, String)] = []
        var expectedRequestFieldsMissing: [String] = []
        /// A path of its own for this step (the suite's `filename`), for Location targets.
        var path: String?
    }

    /// The suite's templates: a response fresh for a long time, and one stale after a pause.
    static let fresh: [(String, Value)] = [("Expires", 100_000), ("Cache-Control", "max-age=100000"),
                                           ("Last-Modified", 0), ("Date", 0)]
}

extension CacheCase {
    /// Plays the case; returns what went wrong, or an empty list.
    func run() async -> [String] {
        let clock = VirtualClock()
        let server = CacheSuiteServer(clock: clock)
        let transport = StubTransport(clock: clock) { request in server.answer(request) }
        let scheduler = RequestScheduler {
            $0.transport = transport
            $0.clock = clock
            $0.retryPolicy = .never
            $0.cache = ResponseCache()
        }
        let api = APIClient(baseURL: URL(string: "https://cache.test")!, scheduler: scheduler, timeout: 600)
        var problems: [String] = []
        for (index, step) in steps.enumerated() {
            server.play(step)
            let arrivalsBefore = transport.arrivals.count
            var resource = Resource<Data>(HTTPVerb(rawValue: step.method), path: step.path ?? id,
                                          headers: Dictionary(step.requestFields, uniquingKeysWith: { "\($0), \($1)" }),
                                          body: step.method == "GET" || step.method == "HEAD" ? nil : .data(Data("abc".utf8)),
                                          acceptableStatusCodes: 100..<600)
            resource = resource.caching(step.policy)
            let reply: Reply<Data>?
            do {
                reply = try await api.reply(for: resource)
            } catch {
                reply = nil
                if step.expected == .cached || step.expectedStatus != nil {
                    problems.append("step \(index + 1): \(error)")
                }
            }
            let arrivals = transport.arrivals.elements.dropFirst(arrivalsBefore)
            let request = arrivals.first?.request
            switch step.expected {
            case .cached?:
                // Served by the cache: without asking the server, or, in an outage, instead of
                // its failure.
                let isOutage = step.disconnect || step.status >= 500
                if reply?.cacheUse.servedFromCache != true || (!isOutage && !arrivals.isEmpty) {
                    problems.append("step \(index + 1): expected cached; the server saw \(arrivals.count), the reply is \(reply.map { "\($0.cacheUse)" } ?? "an error")")
                }
            case .notCached?:
                if arrivals.isEmpty { problems.append("step \(index + 1): expected not cached, the server saw nothing") }
            case .etagValidated?:
                if request?.value(forHTTPHeaderField: "If-None-Match") == nil {
                    problems.append("step \(index + 1): expected an If-None-Match")
                }
            case .lastModifiedValidated?:
                if request?.value(forHTTPHeaderField: "If-Modified-Since") == nil {
                    problems.append("step \(index + 1): expected an If-Modified-Since")
                }
            case nil:
                break
            }
            if let status = step.expectedStatus, reply?.statusCode != status {
                problems.append("step \(index + 1): status \(reply?.statusCode ?? 0), expected \(status)")
            }
            for (name, value) in step.expectedResponseFields where reply?.head.value(forHTTPHeaderField: name) != value {
                problems.append("step \(index + 1): \(name) is \(reply?.head.value(forHTTPHeaderField: name) ?? "absent"), expected \(value)")
            }
            for name in step.expectedResponseFieldsMissing where reply?.head.value(forHTTPHeaderField: name) != nil {
                problems.append("step \(index + 1): \(name) should be absent")
            }
            for (name, value) in step.expectedRequestFields where request?.value(forHTTPHeaderField: name) != value {
                problems.append("step \(index + 1): the request's \(name) is \(request?.value(forHTTPHeaderField: name) ?? "absent"), expected \(value)")
            }
            for name in step.expectedRequestFieldsMissing where request?.value(forHTTPHeaderField: name) != nil {
                problems.append("step \(index + 1): the request should have no \(name)")
            }
            if step.pauseAfter > 0 { clock.advance(by: step.pauseAfter) }
        }
        await scheduler.queuesDrained()
        return problems
    }
}

/// The suite's server: answers each request as the step being played says, with a `Date` of
/// the virtual clock's now unless the step gives one, and a 304 to a request whose validator
/// matches the step's `ETag` or `Last-Modified`.
final class CacheSuiteServer: Sendable {
    private let clock: VirtualClock
    private let step = Locked<CacheCase.Step?>(nil)
    private let served = Locked(0)

    init(clock: VirtualClock) {
        self.clock = clock
    }

    func play(_ step: CacheCase.Step) {
        self.step.withLock { $0 = step }
    }

    func answer(_ request: URLRequest) -> StubResponse {
        guard let step = step.withLock({ $0 }) else { return .status(500) }
        if step.disconnect { return .lostConnection }
        var fields: [String: String] = [:]
        for (name, value) in step.responseFields {
            let text = switch value {
            case .text(let text): text
            case .date(let seconds): Self.httpDate(clock.now.addingTimeInterval(TimeInterval(seconds)))
            }
            fields[name] = fields[name].map { "\($0), \(text)" } ?? text
        }
        if !fields.keys.contains(where: { $0.lowercased() == "date" }) { fields["Date"] = Self.httpDate(clock.now) }
        let number = served.withLock { count in
            count += 1
            return count
        }
        if Self.matches(request, fields) { return .respond(status: 304, headers: fields) }
        return .respond(status: step.status, body: Data("body \(number)".utf8), headers: fields)
    }

    private static func matches(_ request: URLRequest, _ fields: [String: String]) -> Bool {
        func field(_ name: String) -> String? { fields.first { $0.key.lowercased() == name }?.value }
        if let tags = request.value(forHTTPHeaderField: "If-None-Match"), let etag = field("etag") {
            let weakless = { (tag: String) in tag.hasPrefix("W/") ? String(tag.dropFirst(2)) : tag }
            return tags.split(separator: ",").contains { weakless($0.trimmingCharacters(in: .whitespaces)) == weakless(etag) }
        }
        if let since = request.value(forHTTPHeaderField: "If-Modified-Since").flatMap(HTTPDate.parse),
           let modified = field("last-modified").flatMap(HTTPDate.parse) {
            return modified <= since
        }
        return false
    }

    static func httpDate(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }
}
