import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NetworkScheduler

/// A transport with no sockets, for tests: it records every request that reaches "the
/// network", answers as the test scripts, and can hold requests until released.
///
/// ```swift
/// let transport = StubTransport(script: [
///     "POST /v1/login": [.json(#"{"token": "abc"}"#)],
///     "GET /v1/users/42/friends": [.hold],
/// ])
/// let scheduler = RequestScheduler { $0.transport = transport }
/// …
/// await transport.arrivals.wait(for: 2)
/// transport.release(path: "/v1/users/42/friends", with: .json("[]"))
/// #expect(transport.count("POST /v1/login") == 1)
/// ```
public final class StubTransport: HTTPTransport {
    /// One request that reached the network.
    public struct Arrival: Sendable {
        /// The request as the transport got it, headers and body included.
        public let request: URLRequest
        /// Its header fields as the transport got them, a repeated name once per value (a
        /// `URLRequest` joins them).
        public let headerFields: HeaderFields
        /// The file its body was to be read from, if it had one.
        public let bodyFile: TransportRequest.BodyFile?
        /// Its body: the request's, or the file's contents as it arrived (nil if it has none).
        public let body: Data?

        init(_ request: TransportRequest) {
            self.request = request.urlRequest
            headerFields = request.headerFields
            bodyFile = request.bodyFile
            body = request.bodyFile.map { (try? Data(contentsOf: $0.url)) ?? Data() } ?? request.urlRequest.httpBody
        }
        /// Its URL's path.
        public var path: String { request.url?.path ?? "" }
        /// `METHOD /path`, the form routes are written in.
        public var route: String { "\(request.httpMethod ?? "GET") \(path)" }
    }

    private struct Held {
        let task: StubTask
        let request: URLRequest
    }

    private struct State {
        var held: [Held] = []
        var inFlight = 0
        var maxInFlight = 0
        /// What each scripted route answers next; the last answer repeats.
        var script: [String: [StubResponse]]
        /// Set by ``StubTransport/stopHolding(answering:)``: what a request to be held gets.
        var insteadOfHolding: StubResponse?
    }

    /// The most requests the transport runs at once to one host: the scheduler's budget.
    public let maximumConnectionsPerHost: Int
    /// The most to a host whose answers take 5 ms or more: the scheduler's budget there.
    public let maximumConnectionsPerDistantHost: Int
    /// Every request that reached the network, in the order they started.
    public let arrivals = EventLog<Arrival>()
    /// Every task the scheduler cancelled while it was on the wire.
    public let cancellations = EventLog<URLRequest>()
    /// Every request the stub has answered (or failed), listed once the scheduler has handled
    /// the answer: once a 429 is listed here, its host is paused and its retry's timer armed,
    /// so a test may move a ``VirtualClock`` past them.
    public let answered = EventLog<Arrival>()
    /// Each time a streamed answer (``StubResponse/streams(status:headers:chunks:then:)``)
    /// stopped because its sink had no room: the bytes it had handed over by then.
    public let pauses = EventLog<Int>()
    /// The priority each task started with, then each change it was told, by path.
    public let priorities = EventLog<(path: String, priority: RequestPriority)>()
    /// The version of HTTP its answers say they came over: `"HTTP/1.1"` unless a test sets
    /// `"HTTP/2"`, to see a host's budget become one of streams.
    public var httpVersion: String {
        get { version.withLock { $0 } }
        set { version.withLock { $0 = newValue } }
    }
    private let version = Locked("HTTP/1.1")
    private let clock: any SchedulerClock
    private let otherwise: @Sendable (URLRequest) -> StubResponse
    private let state: Locked<State>

    /// A transport that answers every request with what `reply` returns for it.
    ///
    /// - Parameters:
    ///   - maximumConnectionsPerHost: the scheduler's budget per host.
    ///   - maximumConnectionsPerDistantHost: its budget per host whose answers take 5 ms or
    ///     more; nil for the same.
    ///   - clock: the clock ``StubResponse/delayed(_:_:)`` waits on, the system's by default:
    ///     give the scheduler's virtual clock to make latency virtual too.
    ///   - reply: what to do with each request, called as it arrives.
    public convenience init(
        maximumConnectionsPerHost: Int = 6,
        maximumConnectionsPerDistantHost: Int? = nil,
        clock: (any SchedulerClock)? = nil,
        reply: @escaping @Sendable (URLRequest) -> StubResponse = { _ in .json("{}") }
    ) {
        self.init(maximumConnectionsPerHost: maximumConnectionsPerHost,
                  maximumConnectionsPerDistantHost: maximumConnectionsPerDistantHost,
                  clock: clock, script: [:], otherwise: reply)
    }

    /// A transport that answers by route, `"METHOD /path"`: each request on a route takes the
    /// next response of its list, and the last one repeats. Other requests get what
    /// `otherwise` returns (a 404 unless you say).
    ///
    /// - Parameters:
    ///   - maximumConnectionsPerHost: the scheduler's budget per host.
    ///   - maximumConnectionsPerDistantHost: its budget per host whose answers take 5 ms or
    ///     more; nil for the same.
    ///   - clock: the clock ``StubResponse/delayed(_:_:)`` waits on, the system's by default.
    ///   - script: by `"METHOD /path"`, the answers in order; the last one repeats.
    ///   - otherwise: what to do with a request on no scripted route.
    public init(
        maximumConnectionsPerHost: Int = 6,
        maximumConnectionsPerDistantHost: Int? = nil,
        clock: (any SchedulerClock)? = nil,
        script: [String: [StubResponse]],
        otherwise: @escaping @Sendable (URLRequest) -> StubResponse = { _ in .status(404) }
    ) {
        self.maximumConnectionsPerHost = maximumConnectionsPerHost
        self.maximumConnectionsPerDistantHost = maximumConnectionsPerDistantHost ?? maximumConnectionsPerHost
        self.clock = clock ?? .system
        self.otherwise = otherwise
        state = Locked(State(script: script.filter { !$0.value.isEmpty }))
    }

    /// The most requests that were on the wire at once.
    public var maxInFlight: Int { state.withLock { $0.maxInFlight } }
    /// How many requests are held now.
    public var heldCount: Int { state.withLock { $0.held.count } }

    /// How many requests reached the network on `route` (`"POST /v1/posts"`).
    ///
    /// - Parameter route: `METHOD /path`, as `"POST /v1/posts"`.
    public func count(_ route: String) -> Int {
        arrivals.elements.lazy.filter { $0.route == route }.count
    }

    /// Starts a stub task for `request`, answering as scripted.
    ///
    /// - Parameters:
    ///   - transportRequest: the request that reached the network.
    ///   - policy: the priority it starts with (recorded in ``StubTransport/priorities``).
    ///   - progress: told the progress a ``StubResponse/progress(_:then:)`` scripts.
    ///   - completion: called once, with the scripted answer or `URLError.cancelled`.
    public func startTask(
        for transportRequest: TransportRequest,
        policy: TransportPolicy,
        progress: (@Sendable (TransferProgress) -> Void)?,
        completion: @escaping @Sendable (Result<TransportResponse, any Error>) -> Void
    ) -> any TransportTask {
        let request = transportRequest.urlRequest
        let scripted = response(to: request)
        priorities.append((request.url?.path ?? "", policy.priority))
        let task = StubTask(request: request, transport: self, answersCancellation: !scripted.isNever, progress: progress,
                            sink: transportRequest.responseSink, completion: completion)
        state.withLock { state in
            state.inFlight += 1
            state.maxInFlight = max(state.maxInFlight, state.inFlight)
        }
        let response = if case .hold = scripted { listAsHeld(task) ?? .hold } else { scripted }
        // Announced once held, so that a test that releases what arrived always finds it.
        arrivals.append(Arrival(transportRequest))
        if case .hold = response { return task }
        answer(task, with: response)
        return task
    }

    /// Answers the oldest held request (or the oldest whose path is `path`) with `response`, on
    /// the calling thread: requests released one after another end in that order. Returns
    /// whether there was one.
    ///
    /// Wait for the request's arrival (``arrivals``) before releasing it, not for a scheduler's
    /// `.started` event: that is told just before the request is handed to the transport.
    ///
    /// - Parameters:
    ///   - path: the path of the request to release; nil for the oldest held.
    ///   - response: what to answer it.
    @discardableResult
    public func release(path: String? = nil, with response: StubResponse = .json("{}")) -> Bool {
        let held: Held? = state.withLock { state in
            guard let index = state.held.firstIndex(where: { path == nil || $0.request.url?.path == path }) else { return nil }
            return state.held.remove(at: index)
        }
        guard let held else { return false }
        if case .hold = response {
            state.withLock { $0.held.append(held) }
        } else {
            answer(held.task, with: response, onThisThread: true)
        }
        return true
    }

    /// Lists `task` among the held, or returns what ``stopHolding(answering:)`` said to answer
    /// instead: decided in the same turn of the lock as `stopHolding` takes what is held, so that
    /// a request is either among those it releases, or answered.
    private func listAsHeld(_ task: StubTask) -> StubResponse? {
        state.withLock { state in
            if let instead = state.insteadOfHolding { return instead }
            state.held.append(Held(task: task, request: task.request))
            return nil
        }
    }

    /// Releases every request held, oldest first, with `response`, and answers with it every
    /// request that would be held from now on: a test that ends its load with this leaves no
    /// request held, even one that arrives as it runs.
    ///
    /// - Parameter response: what the held requests, and those that would be, get; not `.hold`.
    public func stopHolding(answering response: StubResponse = .json("{}")) {
        precondition(!response.isHold, "stopHolding answers requests; it cannot hold them")
        let held = state.withLock { state in
            state.insteadOfHolding = response
            defer { state.held = [] }
            return state.held
        }
        for request in held { answer(request.task, with: response, onThisThread: true) }
    }

    private func response(to request: URLRequest) -> StubResponse {
        let route = "\(request.httpMethod ?? "GET") \(request.url?.path ?? "")"
        let scripted: StubResponse? = state.withLock { state in
            guard var responses = state.script[route] else { return nil }
            let next = responses.count > 1 ? responses.removeFirst() : responses[0]
            state.script[route] = responses
            return next
        }
        return scripted ?? otherwise(request)
    }

    /// Does what `response` says with a task already started (held ones are listed already):
    /// on another thread, as a transport calls back, unless told otherwise.
    private func answer(_ task: StubTask, with response: StubResponse, onThisThread: Bool = false) {
        let finish: @Sendable (Result<TransportResponse, any Error>) -> Void = { result in
            if onThisThread {
                task.finish(result)
            } else {
                DispatchQueue.global().async { task.finish(result) }
            }
        }
        switch response {
        case .hold:
            if let instead = listAsHeld(task) { answer(task, with: instead, onThisThread: onThisThread) }
        case .never:
            break
        case let .respond(status, body, headers):
            let response = Self.response(to: task.request, status: status, body: body, headers: headers, httpVersion: httpVersion)
            finish(task.sinking(response) ?? .success(response))
        case let .breaks(status, body, headers, error):
            let response = Self.response(to: task.request, status: status, body: body, headers: headers, httpVersion: httpVersion)
            switch task.sinking(response) {
            case .failure(let sinkError)?: finish(.failure(sinkError))
            case .success?, nil: finish(.failure(error))
            }
        case .fail(let error):
            finish(.failure(error))
        case let .progress(steps, then: .hold):
            // Held before its steps are told: a test that releases it once it saw them finds it.
            let instead = listAsHeld(task)
            for step in steps { task.report(step) }
            if let instead { answer(task, with: instead, onThisThread: onThisThread) }
        case let .progress(steps, then):
            for step in steps { task.report(step) }
            answer(task, with: then, onThisThread: onThisThread)
        case let .streams(status, headers, chunks, then):
            let head = Self.response(to: task.request, status: status, body: Data(), headers: headers, httpVersion: httpVersion)
            DispatchQueue.global().async { [self] in
                task.stream(head, chunks) { [self] result in
                    switch (result, then) {
                    case (.failure(let error), _): task.finish(.failure(error))
                    // In memory, whose head the sink saw: `then` holds or cuts it.
                    case (.success(_?), let then?): answer(task, with: then, onThisThread: true)
                    case (.success(let unsunk?), nil): task.finish(.success(unsunk))
                    case (.success(nil), let then?): answer(task, with: then, onThisThread: true)
                    case (.success(nil), nil): task.finish(.success(head))
                    }
                }
            }
        case let .delayed(seconds, then):
            let timer = clock.makeTimer()
            timer.start { [self] in
                timer.stop()
                answer(task, with: then)
            }
            timer.arm(at: clock.uptimeNanoseconds &+ UInt64(max(0, seconds) * 1_000_000_000))
        }
    }

    fileprivate func taskEnded(_ task: StubTask, cancelled: Bool) {
        state.withLock { state in
            state.inFlight -= 1
            state.held.removeAll { $0.task === task }
        }
        if cancelled { cancellations.append(task.request) }
    }

    /// The transport's answer to `request`, as a stub builds it.
    ///
    /// - Parameters:
    ///   - request: the request it answers.
    ///   - status: the status.
    ///   - body: the body.
    ///   - headers: the headers.
    ///   - httpVersion: the version of HTTP it says it came over.
    public static func response(to request: URLRequest, status: Int, body: Data, headers: HeaderFields,
                                httpVersion: String = "HTTP/1.1") -> TransportResponse {
        // A plain head, as a transport other than URLSession hands over.
        TransportResponse(data: body, head: ResponseHead(url: request.url!, statusCode: status, headerFields: headers,
                                                         httpVersion: httpVersion))
    }
}

/// One stub task: finishes once, by an answer or by cancellation.
final class StubTask: TransportTask {
    let request: URLRequest
    private let transport: StubTransport
    private let answersCancellation: Bool
    private let progress: (@Sendable (TransferProgress) -> Void)?
    private let sink: (any ResponseBodySink)?
    private let completion: Locked<(@Sendable (Result<TransportResponse, any Error>) -> Void)?>

    init(request: URLRequest, transport: StubTransport, answersCancellation: Bool,
         progress: (@Sendable (TransferProgress) -> Void)?, sink: (any ResponseBodySink)?,
         completion: @escaping @Sendable (Result<TransportResponse, any Error>) -> Void) {
        self.request = request
        self.transport = transport
        self.answersCancellation = answersCancellation
        self.progress = progress
        self.sink = sink
        self.completion = Locked(completion)
    }

    /// Hands `response`'s head and body to the request's sink, as a transport does, in two
    /// chunks: the response without its body if the sink took it, the sink's error if it threw,
    /// or nil if there is no sink or it declined the body.
    func sinking(_ response: TransportResponse) -> Result<TransportResponse, any Error>? {
        guard let sink, completion.withLock({ $0 != nil }) else { return nil }
        do {
            guard try sink.accept(response.head) else { return nil }
            let half = response.data.count / 2
            for chunk in [response.data.prefix(half), response.data.dropFirst(half)] where !chunk.isEmpty {
                try sink.write(Data(chunk))
            }
            return .success(TransportResponse(data: Data(), head: response.head))
        } catch {
            return .failure(error)
        }
    }

    /// Hands `head` and then `chunks` to the request's sink, each once the sink has room, on
    /// any thread; then `done` gets nil, or the whole response if there is no sink or it
    /// declined the body, or the sink's error. A task that ended meanwhile stops, unanswered.
    func stream(_ head: TransportResponse, _ chunks: [Data],
                done: @escaping @Sendable (Result<TransportResponse?, any Error>) -> Void) {
        let whole = TransportResponse(data: chunks.reduce(Data(), +), head: head.head)
        guard let sink, completion.withLock({ $0 != nil }) else { return done(.success(whole)) }
        do {
            guard try sink.accept(head.head) else { return done(.success(whole)) }
        } catch {
            return done(.failure(error))
        }
        write(chunks[...], after: 0, to: sink, done: done)
    }

    private func write(_ chunks: ArraySlice<Data>, after written: Int, to sink: any ResponseBodySink,
                       done: @escaping @Sendable (Result<TransportResponse?, any Error>) -> Void) {
        var rest = chunks
        var written = written
        while let chunk = rest.popFirst() {
            guard completion.withLock({ $0 != nil }) else { return }
            do {
                try sink.write(chunk)
            } catch {
                return done(.failure(error))
            }
            written += chunk.count
            let (left, total) = (rest, written)
            guard sink.hasRoom(orWhenRoom: { [self] in
                DispatchQueue.global().async { self.write(left, after: total, to: sink, done: done) }
            }) else {
                transport.pauses.append(total)
                return
            }
        }
        done(.success(nil))
    }

    /// Tells the scheduler of `step`, unless the task has ended.
    func report(_ step: TransferProgress) {
        guard completion.withLock({ $0 != nil }) else { return }
        progress?(step)
    }

    func cancel() {
        guard let completion = takeCompletion() else { return }
        transport.taskEnded(self, cancelled: true)
        guard answersCancellation else { return }
        DispatchQueue.global().async { completion(.failure(URLError(.cancelled))) }
    }

    func reprioritize(to priority: RequestPriority) {
        transport.priorities.append((request.url?.path ?? "", priority))
    }

    func finish(_ result: Result<TransportResponse, any Error>) {
        guard let completion = takeCompletion() else { return }
        transport.taskEnded(self, cancelled: false)
        completion(result)
        // The scheduler handles a report inline, in its completion.
        transport.answered.append(StubTransport.Arrival(TransportRequest(request)))
    }

    private func takeCompletion() -> (@Sendable (Result<TransportResponse, any Error>) -> Void)? {
        completion.withLock { completion in
            defer { completion = nil }
            return completion
        }
    }
}
