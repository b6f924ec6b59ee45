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

    private let clock: VirtualClock
    private let step = NIOLockedValueBox<CacheCase.Step?>(nil)
    private let requests = NIOLockedValueBox<[[String: String]]>([])

    init(clock: VirtualClock) {
        self.clock = clock
    }

    func play(_ step: CacheCase.Step) {
        self.step.withLockedValue { $0 = step }
    }

    /// The fields of each request seen, by lowercased name, oldest first.
    var seen: [[String: String]] { requests.withLockedValue { $0 } }

    /// A transport to this server, its base URL, and what stops both: a stub transport that
    /// asks it directly, or the transport `kind` to it on 127.0.0.1.
    func client(over kind: TransportKind?) async throws
        -> (transport: any HTTPTransport, baseURL: URL, stop: @Sendable () async -> Void) {
        guard let kind else {
            let stub = StubTransport { [self] request in
                var fields: [String: String] = [:]
                for (name, value) in request.allHTTPHeaderFields ?? [:] { fields[name.lowercased()] = value }
                guard let answer = answer(fields) else { return .lostConnection }
                return .respond(status: answer.status, body: answer.body, headers: answer.fields ?? [:])
            }
            return (stub, URL(string: "https://cache.test")!, {})
        }
        // Every method and path: a router knows only the methods it was given.
        let server = try await LoopbackHTTPServer.start(SuiteResponder(server: self), name: "CacheSuiteServer")
        let (transport, shutDown) = kind.make()
        return (transport, server.baseURL, {
            await shutDown()
            await server.stop()
        })
    }

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
        requests.withLockedValue { $0.append(fields) }
        guard let step = step.withLockedValue({ $0 }), !step.disconnect else { return nil }
        var answer: [String: String] = [:]
        for (name, value) in step.responseFields {
            let text = switch value {
            case .text(let text): text
            case .date(let seconds): Self.httpDate(clock.now.addingTimeInterval(TimeInterval(seconds)))
            }
            answer[name] = answer[name].map { "\($0), \(text)" } ?? text
        }
        if !answer.keys.contains(where: { $0.lowercased() == "date" }) { answer["Date"] = Self.httpDate(clock.now) }
        if Self.matches(fields, answer) { return Answer(status: 304, fields: answer, body: Data()) }
        return Answer(status: step.status, fields: answer, body: Data("body \(seen.count)".utf8))
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
