import Foundation
import NetworkScheduler
import NetworkSchedulerTesting

/// Cases of the HTTP Caching Tests suite (http-tests/cache-tests), ported as data: each is a
/// list of requests to one URL, with what the server answers and what the client must see.
/// ``run(on:)`` plays one through a scheduler with a cache on a virtual clock, against a
/// ``CacheSuiteServer`` that answers as the suite's server does: behind a stub transport, or on
/// 127.0.0.1 over URLSession or AsyncHTTPClient.
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
    /// Plays the case against `endpoint`'s server, through a scheduler and a cache of its own;
    /// returns what went wrong, or an empty list.
    func run(on endpoint: CacheSuiteServer.Endpoint) async -> [String] {
        let server = endpoint.server
        // From the wall clock's now: a real server (Hummingbird) sets every answer's `Date`
        // itself, so the client's clock must start where the server's is.
        let clock = VirtualClock(startingAt: Date())
        server.begin(on: clock)
        let scheduler = RequestScheduler {
            $0.transport = endpoint.transport
            $0.clock = clock
            $0.retryPolicy = .never
            $0.cache = ResponseCache()
        }
        let api = APIClient(baseURL: endpoint.baseURL, scheduler: scheduler, timeout: 60)
        var problems: [String] = []
        for (index, step) in steps.enumerated() {
            server.play(step)
            let seenBefore = server.seen.count
            var resource = Resource<Data>(HTTPVerb(rawValue: step.method), path: step.path ?? id,
                                          headers: HeaderFields(step.requestFields.map { (name: $0.0, value: $0.1) }),
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
            let seen = server.seen.dropFirst(seenBefore)
            let request = seen.first
            switch step.expected {
            case .cached?:
                // Served by the cache: without asking the server, or, in an outage, instead of
                // its failure.
                let isOutage = step.disconnect || step.status >= 500
                if reply?.cacheUse.servedFromCache != true || (!isOutage && !seen.isEmpty) {
                    problems.append("step \(index + 1): expected cached; the server saw \(seen.count), the reply is \(reply.map { "\($0.cacheUse)" } ?? "an error")")
                }
            case .notCached?:
                if seen.isEmpty { problems.append("step \(index + 1): expected not cached, the server saw nothing") }
            case .etagValidated?:
                if request?["if-none-match"] == nil { problems.append("step \(index + 1): expected an If-None-Match") }
            case .lastModifiedValidated?:
                if request?["if-modified-since"] == nil { problems.append("step \(index + 1): expected an If-Modified-Since") }
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
            for (name, value) in step.expectedRequestFields where request?[name.lowercased()] != value {
                problems.append("step \(index + 1): the request's \(name) is \(request?[name.lowercased()] ?? "absent"), expected \(value)")
            }
            for name in step.expectedRequestFieldsMissing where request?[name.lowercased()] != nil {
                problems.append("step \(index + 1): the request should have no \(name)")
            }
            if step.pauseAfter > 0 { clock.advance(by: step.pauseAfter) }
        }
        await scheduler.queuesDrained()
        return problems
    }
}
