import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NetworkScheduler

/// A transport that misbehaves as real networks and servers do, while its faults are on:
/// answers on the calling thread (before `startTask` returns) or later, 429 and 503 with
/// `Retry-After`, 5xx, timeouts, lost and refused connections, no network, hangs that only a
/// cancellation ends, tasks that cancel themselves, 401s, bodies that are not JSON. With its
/// faults off it answers every request well, soon. It keeps nothing per request, so that a run
/// of a million callers holds no more than a run of a thousand.
///
/// As a real transport does, it enforces each request's policy: it follows `/moved` to another
/// origin only under `.follow` (else the 302 is the answer), and fails a body past the size
/// limit. Its answers say they came over HTTP/1.1, HTTP/2 or HTTP/3 (or nothing), changing as
/// they go, and one in ten takes 5 ms or more, so that its hosts' budgets widen and narrow
/// mid-run. Its export changes version now and then, omits the total of a range (`*`) half the
/// time, cuts bodies short while the faults are on, and answers some resumes of an older
/// version with a part of the new one. Once its lifecycle is closed it sends nothing.
final class ChaosTransport: HTTPTransport {
    let maximumConnectionsPerHost = 4
    /// A host whose first answers all took 5 ms or more widens to 6, and narrows back at its
    /// first quick one.
    let maximumConnectionsPerDistantHost = 6
    let lifecycle = TransportLifecycle()
    /// The name of the answer at the other origin `/moved` leads to.
    static let elsewhere = "elsewhere"
    private let random: SeededRandom
    private let faultsOn = Mutex(true)
    /// The export's version now.
    private let exportVersion = Mutex(1)
    /// What its server keeps of the outbox's writes.
    let server = ChaosServerState()
    /// Attempts started, and those it hung, for the report.
    let counts = Mutex((started: 0, hung: 0))

    init(random: SeededRandom) {
        self.random = random
    }

    /// Turns the faults on or off: off, every request is answered well.
    func setFaults(_ on: Bool) { faultsOn.withLock { $0 = on } }

    func startTask(
        for request: TransportRequest,
        policy: TransportPolicy,
        progress: (@Sendable (TransferProgress) -> Void)?,
        completion: @escaping @Sendable (Result<TransportResponse, any Error>) -> Void
    ) -> any TransportTask {
        let task = ChaosTask(completion)
        guard !lifecycle.isClosed else {
            task.finish(.failure(ServiceError.transportClosed))
            return task
        }
        let faults = faultsOn.withLock { $0 }
        let fault = faults ? Fault.draw(random, request: request.urlRequest) : .none
        counts.withLock { counts in
            counts.started += 1
            if case .hang = fault { counts.hung += 1 }
        }
        if case .hang = fault { return task }
        let answer: @Sendable () -> Void = { [self] in
            if let total = request.bodyLength, total > 0 {
                progress?(TransferProgress(bytesSent: total, bytesExpectedToSend: total))
            }
            task.finish(self.result(of: fault, for: request, policy: policy, faults: faults))
        }
        // Faults on: a third answer before `startTask` has returned, on the thread that sent.
        if faults, random.chance(33) {
            answer()
        } else {
            // One answer in ten comes from far away (5 to 8 ms).
            let distance = random.chance(10) ? 5_000 : 0
            let delay = distance + (faults ? random.below(3_000) : random.below(300))
            DispatchQueue.global().asyncAfter(deadline: .now() + .microseconds(delay), execute: answer)
        }
        return task
    }

    /// What a request gets for `fault`: an error, or a response (handed to its sink first, if
    /// it has one: a download's file, a stream's reader).
    private func result(of fault: Fault, for request: TransportRequest, policy: TransportPolicy,
                        faults: Bool) -> Result<TransportResponse, any Error> {
        var url = request.urlRequest.url!
        let (status, headers, body): (Int, HeaderFields, Data)
        var isCut = false
        switch fault {
        case .error(let code): return .failure(URLError(code))
        case .status(let code, let retryAfter):
            (status, headers, body) = (code, retryAfter.map { ["Retry-After": "\($0)"] } ?? [:], Data(#"{"message":"chaos"}"#.utf8))
        case .none where url.path.hasSuffix("/export"), .malformed where url.path.hasSuffix("/export"):
            // A file is no JSON: its faults are versions, ranges and cuts.
            (status, headers, body) = exportAnswer(to: request.urlRequest)
            isCut = faults && random.chance(30)
        case .malformed:
            (status, headers, body) = (200, ["Content-Type": "application/json"], Data("{not json".utf8))
        case .none where url.path.hasSuffix("/moved") && policy.redirects == .follow:
            url = URL(string: "https://c.test/v1/moved")!
            (status, headers, body) = (200, ["Content-Type": "application/json"], Data(#"{"id":2,"name":"\#(Self.elsewhere)"}"#.utf8))
        case .none where url.path.hasSuffix("/moved"):
            (status, headers, body) = (302, ["Location": "https://c.test/v1/moved"], Data())
        case .none, .hang:
            (status, headers, body) = Self.answer(to: request.urlRequest)
        }
        if (200..<300).contains(status) { server.apply(request.urlRequest) }
        // Hosts change protocol mid-run, so that their budgets widen to streams and narrow back
        // to connections while calls run; an answer that says nothing leaves the budget.
        let version: String? = random.pick(["HTTP/1.1", "HTTP/1.1", "HTTP/2", "HTTP/2", "h3", nil])
        let response = TransportResponse(data: body, head: ResponseHead(url: url, statusCode: status, headerFields: headers,
                                                                        httpVersion: version))
        guard let sink = request.responseSink else {
            guard body.count <= policy.maximumResponseSize else {
                return .failure(ServiceError.responseTooLarge(limit: policy.maximumResponseSize))
            }
            return .success(response)
        }
        do {
            guard try sink.accept(response.head) else { return .success(response) }
            let half = body.count / 2
            try sink.write(body.prefix(half))
            // Cut short after half, as a connection lost mid-body.
            if isCut { return .failure(URLError(.networkConnectionLost)) }
            try sink.write(body.dropFirst(half))
            return .success(TransportResponse(data: Data(), head: response.head))
        } catch {
            return .failure(error)
        }
    }

    /// The export's answer: the whole of its version now, or the rest asked for by `Range`
    /// (its total given or `*`); to a resume of an older version, the whole new one, or, as a
    /// hostile server does, a part of the new one under its own `ETag`.
    private func exportAnswer(to request: URLRequest) -> (Int, HeaderFields, Data) {
        let version = exportVersion.withLock { [random] version in
            if random.chance(20) { version = random.pick(ExportVersions.all) }
            return version
        }
        let body = ExportVersions.body(of: version)
        let tag = ExportVersions.tag(of: version)
        let whole: (Int, HeaderFields, Data) = (200, ["ETag": tag, "Content-Length": "\(body.count)"], body)
        guard let range = request.value(forHTTPHeaderField: "Range"), range.hasPrefix("bytes="),
              let start = Int(range.dropFirst("bytes=".count).split(separator: "-").first ?? ""), start < body.count else {
            return whole
        }
        let isSameVersion = request.value(forHTTPHeaderField: "If-Range") == tag
        guard isSameVersion || random.chance(50) else { return whole }
        let total = random.chance(50) ? "*" : "\(body.count)"
        return (206, ["ETag": tag, "Content-Range": "bytes \(start)-\(body.count - 1)/\(total)"], body.subdata(in: start..<body.count))
    }

    /// A good answer, by path.
    private static func answer(to request: URLRequest) -> (Int, HeaderFields, Data) {
        let path = request.url?.path ?? ""
        if path.hasSuffix("/big") {
            let name = String(repeating: "x", count: 2_000)
            return (200, ["Content-Type": "application/json"], Data(#"{"id":3,"name":"\#(name)"}"#.utf8))
        }
        if path.hasSuffix("/live") {
            return (200, ["Content-Type": "text/event-stream"], Data("id: 1\ndata: one\n\ndata: two\n\n".utf8))
        }
        if path.hasSuffix("/whoami") {
            // Whoever the token names: a caller of another user must never read it.
            let user = request.value(forHTTPHeaderField: "Authorization")?.replacingOccurrences(of: "Bearer ", with: "") ?? ""
            return (200, ["Cache-Control": "max-age=1", "Content-Type": "application/json"], Data(#"{"user":"\#(user)"}"#.utf8))
        }
        if path.hasSuffix("/profile") {
            return (200, ["Cache-Control": "max-age=1, stale-while-revalidate=1", "ETag": "\"p1\""],
                    Data(#"{"id":1,"name":"profile"}"#.utf8))
        }
        let status = request.httpMethod == "POST" ? 201 : 200
        return (status, ["Content-Type": "application/json"], Data(#"{"id":1,"name":"chaos"}"#.utf8))
    }
}

/// What goes wrong with one attempt.
private enum Fault {
    case none
    case hang
    case error(URLError.Code)
    case status(Int, retryAfter: Int?)
    case malformed

    static func draw(_ random: SeededRandom, request: URLRequest) -> Fault {
        switch random.below(100) {
        case 0..<50: return .none
        case 50..<54: return .status(429, retryAfter: random.below(2))
        case 54..<58: return .status(503, retryAfter: 1)
        case 58..<64: return .status(random.pick([500, 502, 504]), retryAfter: nil)
        case 64..<69: return .error(.networkConnectionLost)
        case 69..<72: return .error(.timedOut)
        case 72..<75: return .hang
        case 75..<78: return .error(.cannotConnectToHost)
        case 78..<80: return .error(.cancelled)
        case 80..<84: return request.value(forHTTPHeaderField: "Authorization") == nil ? .none : .status(401, retryAfter: nil)
        case 84..<86: return .error(.notConnectedToInternet)
        case 86..<88: return .malformed
        default: return .none
        }
    }
}

/// One attempt: ends once, by its answer or by a cancellation.
private final class ChaosTask: TransportTask {
    private let completion: Mutex<(@Sendable (Result<TransportResponse, any Error>) -> Void)?>

    init(_ completion: @escaping @Sendable (Result<TransportResponse, any Error>) -> Void) {
        self.completion = Mutex(completion)
    }

    func finish(_ result: Result<TransportResponse, any Error>) {
        let completion = completion.withLock { completion in
            defer { completion = nil }
            return completion
        }
        completion?(result)
    }

    func cancel() {
        finish(.failure(URLError(.cancelled)))
    }
}
