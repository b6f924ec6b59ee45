import Foundation
import Hummingbird
import NetworkScheduler
import NetworkSchedulerAsyncHTTPClient
import NetworkSchedulerTesting
import NIOConcurrencyHelpers
import NIOCore
import SocialServer

/// The suite's server: answers each request as the step being played says, with a `Date` of
/// the virtual clock's now unless the step gives one, and a 304 to a request whose validator
/// matches the step's `ETag` or `Last-Modified`. It keeps the fields of every request it saw.
final class CacheSuiteServer: Sendable {
    /// An answer: a status, fields and a body; nil fields for a connection dropped unanswered.
    struct Answer {
        var status: Int
        var fields: [String: String]?
        var body: Data
    }

    private struct State {
        var clock = VirtualClock()
        var step: CacheCase.Step?
        var requests: [[String: String]] = []
    }

    private let state = NIOLockedValueBox(State())

    /// The server, and what the cases' schedulers send to it through.
    struct Endpoint: Sendable {
        let server: CacheSuiteServer
        /// A stub that asks the server directly, or a transport to it on 127.0.0.1.
        let transport: any HTTPTransport
        let baseURL: URL
        /// Shuts the transport down and stops the server.
        let stop: @Sendable () async -> Void
    }

    private init() {}

    /// A server behind a stub transport (`kind` nil), or on 127.0.0.1 with a transport `kind`
    /// to it: one for a whole section, so that a run starts a few servers, not hundreds (a
    /// port a server frees may be given to another test's server).
    static func start(over kind: TransportKind?) async throws -> Endpoint {
        let server = CacheSuiteServer()
        guard let kind else {
            let stub = StubTransport { [server] request in
                var fields: [String: String] = [:]
                for (name, value) in request.allHTTPHeaderFields ?? [:] { fields[name.lowercased()] = value }
                guard let answer = server.answer(fields) else { return .lostConnection }
                return .respond(status: answer.status, body: answer.body, headers: HeaderFields(answer.fields ?? [:]))
            }
            return Endpoint(server: server, transport: stub, baseURL: URL(string: "https://cache.test")!, stop: {})
        }
        // Every method and path: a router knows only the methods it was given.
        let listening = try await LoopbackHTTPServer.start(SuiteResponder(server: server), name: "CacheSuiteServer")
        let (transport, shutDown) = kind.make()
        return Endpoint(server: server, transport: transport, baseURL: listening.baseURL) {
            await shutDown()
            await listening.stop()
        }
    }

    /// Starts a case on `clock`, whose now the answers' dates count from: what the server saw
    /// before is forgotten.
    func begin(on clock: VirtualClock) {
        state.withLockedValue { $0 = State(clock: clock) }
    }

    func play(_ step: CacheCase.Step) {
        state.withLockedValue { $0.step = step }
    }

    /// The fields of each request seen in this case, by lowercased name, oldest first.
    var seen: [[String: String]] { state.withLockedValue { $0.requests } }

    fileprivate func respond(to request: Request, _ context: SocialContext) -> Response {
        var fields: [String: String] = [:]
        for field in request.headers { fields[field.name.canonicalName.lowercased()] = field.value }
        guard let answer = answer(fields), let answerFields = answer.fields else {
            _ = context.channel.close()
            return Response(status: .internalServerError)
        }
        var response = Response(status: HTTPResponse.Status(code: answer.status),
                                body: ResponseBody(byteBuffer: ByteBuffer(bytes: answer.body)))
        // The suite's names are all tokens.
        for (name, value) in answerFields { response.headers[.init(name)!] = value }
        return response
    }

    /// The answer to a request with `fields` (lowercased names), which it records; nil to drop
    /// the connection.
    func answer(_ fields: [String: String]) -> Answer? {
        let (step, now, count) = state.withLockedValue { state in
            state.requests.append(fields)
            return (state.step, state.clock.now, state.requests.count)
        }
        guard let step, !step.disconnect else { return nil }
        var answer: [String: String] = [:]
        for (name, value) in step.responseFields {
            let text = switch value {
            case .text(let text): text
            case .date(let seconds): Self.httpDate(now.addingTimeInterval(TimeInterval(seconds)))
            }
            answer[name] = answer[name].map { "\($0), \(text)" } ?? text
        }
        if !answer.keys.contains(where: { $0.lowercased() == "date" }) { answer["Date"] = Self.httpDate(now) }
        if Self.matches(fields, answer) { return Answer(status: 304, fields: answer, body: Data()) }
        return Answer(status: step.status, fields: answer, body: Data("body \(count)".utf8))
    }

    private static func matches(_ request: [String: String], _ answer: [String: String]) -> Bool {
        func field(_ name: String) -> String? { answer.first { $0.key.lowercased() == name }?.value }
        if let tags = request["if-none-match"], let etag = field("etag") {
            let weakless = { (tag: String) in tag.hasPrefix("W/") ? String(tag.dropFirst(2)) : tag }
            return tags.split(separator: ",").contains { weakless($0.trimmingCharacters(in: .whitespaces)) == weakless(etag) }
        }
        if let since = request["if-modified-since"].flatMap(date(from:)), let modified = field("last-modified").flatMap(date(from:)) {
            return modified <= since
        }
        return false
    }

    private static func formatter() -> DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter
    }

    static func httpDate(_ date: Date) -> String { formatter().string(from: date) }

    private static func date(from text: String) -> Date? { formatter().date(from: text) }
}

/// Answers every request to the suite's server, whatever its method and path.
private struct SuiteResponder: HTTPResponder, HTTPResponderBuilder {
    let server: CacheSuiteServer

    func respond(to request: Request, context: SocialContext) async throws -> Response {
        server.respond(to: request, context)
    }

    func buildResponder() -> Self { self }
}
