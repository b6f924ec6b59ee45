import AsyncHTTPClient
import Foundation
import Hummingbird
import HummingbirdHTTP2
import NIOConcurrencyHelpers
import NIOSSL
import NetworkScheduler
import NetworkSchedulerAsyncHTTPClient
import SocialServer

/// A server on 127.0.0.1 that speaks HTTP/2 over TLS (ALPN `h2`), with a certificate made for
/// the run, and counts how many requests it holds at once:
/// - `GET /echo` answers at once with the request's headers;
/// - `GET /meet/{n}` waits until as many requests as its `meeting` size are in (10 s at most,
///   so that a client that never sends them all still ends), then answers;
/// - `GET /held/{n}` waits until ``releaseHeld()`` (or ``stop()``).
final class HTTP2Server: Sendable {
    struct Answer: ResponseEncodable, Decodable {
        var path: String
        var headers: [String: String]
    }

    private struct State {
        var inFlight = 0
        var mostInFlight = 0
        var arrived: [String] = []
        var isHeldReleased = false
        var waiters: [(isMeeting: Bool, continuation: CheckedContinuation<Void, Never>)] = []
        var arrivalWaiters: [(count: Int, id: UUID, continuation: CheckedContinuation<Bool, Never>)] = []
    }

    let server: LoopbackHTTPServer
    let certificates: LoopbackCertificates
    /// How many requests to `/meet/` answer together.
    let meeting: Int
    private let state: NIOLockedValueBox<State>

    /// The most requests it held at once.
    var mostInFlight: Int { state.withLockedValue { $0.mostInFlight } }
    /// The paths of the requests that reached it, in order.
    var arrived: [String] { state.withLockedValue { $0.arrived } }
    var baseURL: URL { server.baseURL }

    static func start(meeting: Int = 1) async throws -> HTTP2Server {
        let certificates = try LoopbackCertificates.shared.get()
        let state = NIOLockedValueBox(State())
        let router = Router()
        router.get("/echo") { request, _ in try await Self.answer(request, state: state, meeting: meeting) }
        router.get("/meet/:n") { request, _ in try await Self.answer(request, state: state, meeting: meeting) }
        router.get("/held/:n") { request, _ in try await Self.answer(request, state: state, meeting: meeting) }
        let chain = try NIOSSLCertificate.fromPEMFile(certificates.certificateFile).map { NIOSSLCertificateSource.certificate($0) }
        let key = try NIOSSLPrivateKey(file: certificates.keyFile, format: .pem)
        let tls = TLSConfiguration.makeServerConfiguration(certificateChain: chain, privateKey: .privateKey(key))
        let server = try await LoopbackHTTPServer.start(router, name: "http2", server: .http2Upgrade(tlsConfiguration: tls),
                                                        isTLS: true)
        return HTTP2Server(server: server, certificates: certificates, meeting: meeting, state: state)
    }

    private init(server: LoopbackHTTPServer, certificates: LoopbackCertificates, meeting: Int, state: NIOLockedValueBox<State>) {
        self.server = server
        self.certificates = certificates
        self.meeting = meeting
        self.state = state
    }

    private static func answer(_ request: Request, state: NIOLockedValueBox<State>, meeting: Int) async throws -> Answer {
        let path = request.uri.path
        let (isMeeting, isHeld) = (path.hasPrefix("/meet/"), path.hasPrefix("/held/"))
        let box = state
        await withCheckedContinuation { continuation in
            let (ready, arrivedFor): ([CheckedContinuation<Void, Never>], [CheckedContinuation<Bool, Never>]) = state.withLockedValue { state in
                state.arrived.append(path)
                let count = state.arrived.count
                let arrivedFor = state.arrivalWaiters.filter { $0.count <= count }.map(\.continuation)
                state.arrivalWaiters.removeAll { $0.count <= count }
                state.inFlight += 1
                state.mostInFlight = max(state.mostInFlight, state.inFlight)
                if isHeld, !state.isHeldReleased {
                    state.waiters.append((false, continuation))
                    return ([], arrivedFor)
                }
                guard isMeeting else { return ([continuation], arrivedFor) }
                state.waiters.append((true, continuation))
                let meetingHere = state.waiters.filter(\.isMeeting)
                guard meetingHere.count >= meeting else {
                    if meetingHere.count == 1 {
                        DispatchQueue.global().asyncAfter(deadline: .now() + 10) { Self.endMeeting(box) }
                    }
                    return ([], arrivedFor)
                }
                state.waiters.removeAll(where: \.isMeeting)
                return (meetingHere.map(\.continuation), arrivedFor)
            }
            for continuation in arrivedFor { continuation.resume(returning: true) }
            for continuation in ready { continuation.resume() }
        }
        state.withLockedValue { $0.inFlight -= 1 }
        var headers: [String: String] = [:]
        for field in request.headers { headers[field.name.canonicalName] = field.value }
        return Answer(path: path, headers: headers)
    }

    /// Answers the requests waiting to meet the others, however many came.
    private static func endMeeting(_ state: NIOLockedValueBox<State>) {
        let meeting = state.withLockedValue { state in
            defer { state.waiters.removeAll(where: \.isMeeting) }
            return state.waiters.filter(\.isMeeting).map(\.continuation)
        }
        for continuation in meeting { continuation.resume() }
    }

    /// Answers the requests held at `/held/`, and those that come after.
    func releaseHeld() {
        let held = state.withLockedValue { state in
            state.isHeldReleased = true
            defer { state.waiters.removeAll(where: { !$0.isMeeting }) }
            return state.waiters.filter { !$0.isMeeting }.map(\.continuation)
        }
        for continuation in held { continuation.resume() }
    }

    /// Answers every request still waiting: a test that broke ends.
    func releaseAll() {
        let all = state.withLockedValue { state in
            state.isHeldReleased = true
            defer { state.waiters = [] }
            return state.waiters.map(\.continuation)
        }
        for continuation in all { continuation.resume() }
    }

    /// Waits until `count` requests have reached it, for at most `timeout` seconds: returns
    /// whether they did.
    func waitForArrivals(_ count: Int, timeout: Double = 30) async -> Bool {
        let id = UUID()
        return await withCheckedContinuation { continuation in
            let reached = state.withLockedValue { state in
                if state.arrived.count >= count { return true }
                state.arrivalWaiters.append((count, id, continuation))
                return false
            }
            if reached { return continuation.resume(returning: true) }
            DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { [state] in
                let expired = state.withLockedValue { state in
                    defer { state.arrivalWaiters.removeAll { $0.id == id } }
                    return state.arrivalWaiters.first { $0.id == id }?.continuation
                }
                expired?.resume(returning: false)
            }
        }
    }

    /// A scheduler over AsyncHTTPClient that trusts this server's certificate, and the transport
    /// to shut down after.
    func scheduler(_ configure: (inout RequestScheduler.Configuration) -> Void = { _ in }) throws
        -> (RequestScheduler, AsyncHTTPClientTransport, HTTPClient) {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .file(certificates.caFile)
        let client = HTTPClient(eventLoopGroupProvider: .singleton,
                                configuration: HTTPClient.Configuration(tlsConfiguration: tls, redirectConfiguration: .disallow))
        let transport = AsyncHTTPClientTransport(client: client)
        let scheduler = RequestScheduler { configuration in
            configuration.transport = transport
            configure(&configuration)
        }
        return (scheduler, transport, client)
    }

    func stop() async {
        releaseAll()
        await server.stop()
    }
}

/// A certificate authority made for one run, and a certificate for 127.0.0.1 it signs, in
/// PEM files of a temporary folder (made with `openssl`).
struct LoopbackCertificates: Sendable {
    /// The test process's, made once: each pair of RSA keys costs the machine a moment that
    /// the suites running beside would feel.
    static let shared = Result { try make() }

    let folder: URL
    var caFile: String { folder.appendingPathComponent("ca.crt").path }
    var certificateFile: String { folder.appendingPathComponent("server.crt").path }
    var keyFile: String { folder.appendingPathComponent("server.key").path }

    static func make() throws -> LoopbackCertificates {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let certificates = LoopbackCertificates(folder: folder)
        try "subjectAltName=IP:127.0.0.1,DNS:localhost\n".write(to: folder.appendingPathComponent("san.ext"), atomically: true,
                                                                  encoding: .utf8)
        try openssl(in: folder, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=Test CA",
                    "-keyout", "ca.key", "-out", "ca.crt")
        try openssl(in: folder, "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1",
                    "-keyout", "server.key", "-out", "server.csr")
        try openssl(in: folder, "x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
                    "-days", "1", "-extfile", "san.ext", "-out", "server.crt")
        return certificates
    }

    private static func openssl(in folder: URL, _ arguments: String...) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["openssl"] + arguments
        process.currentDirectoryURL = folder
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw CocoaError(.fileWriteUnknown) }
    }
}

/// A transport over AsyncHTTPClient that trusts a test server's certificate and offers HTTP/2
/// (ALPN `h2`, `http/1.1`) until ``switchToHTTP1()``, then HTTP/1.1 only, through a second
/// client, as a host whose answers change protocol (a load balancer put in front of it).
final class SwitchingTransport: HTTPTransport {
    private let clients: [HTTPClient]
    private let transports: [AsyncHTTPClientTransport]
    private let isHTTP1 = NIOLockedValueBox(false)

    init(trusting caFile: String) throws {
        clients = [HTTPClient.Configuration.HTTPVersion.automatic, .http1Only].map { version in
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .file(caFile)
            var configuration = HTTPClient.Configuration(tlsConfiguration: tls, redirectConfiguration: .disallow)
            configuration.httpVersion = version
            return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        }
        transports = clients.map { AsyncHTTPClientTransport(client: $0) }
    }

    func switchToHTTP1() { isHTTP1.withLockedValue { $0 = true } }

    var maximumConnectionsPerHost: Int { transports[0].maximumConnectionsPerHost }

    func startTask(for request: TransportRequest, policy: TransportPolicy, progress: (@Sendable (TransferProgress) -> Void)?,
                   completion: @escaping @Sendable (Result<TransportResponse, any Error>) -> Void) -> any TransportTask {
        let current = transports[isHTTP1.withLockedValue { $0 } ? 1 : 0]
        return current.startTask(for: request, policy: policy, progress: progress, completion: completion)
    }

    func shutdown() async throws {
        for transport in transports { try await transport.shutdown() }
        for client in clients { try await client.shutdown() }
    }
}
