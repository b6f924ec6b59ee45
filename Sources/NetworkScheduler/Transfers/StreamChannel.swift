import Foundation

/// A stream's elements between its transport and its one reader, across its connections.
///
/// Its buffer holds at most `limit` bytes of elements the reader has not taken: past that it
/// asks the transport to stop reading (``ResponseBodySink/hasRoom(orWhenRoom:)``) until the
/// reader has taken half. A transport that cannot stop reading fills it up to twice the limit,
/// and then the stream fails with ``ServiceError/streamBufferFull(limit:)``.
///
/// It ends once, with the caller's outcome from its scheduler (which comes after every chunk
/// its transport handed over): the reader gets what arrived, then the end or the error. A
/// cancellation ends the reading at once.
final class StreamChannel<Element: Sendable>: StreamIntake, @unchecked Sendable {
    // Safety: the mutable state is in `state`, behind its lock.

    let limit: Int
    /// What a reconnection waits for, if the server did not say; nil for a stream that does
    /// not reconnect once it delivered something.
    private let reconnection: StreamReconnection?
    private let state: Locked<State>

    fileprivate struct State {
        var decoder: any StreamDecoder<Element>
        /// Elements not yet read, from `head` on.
        var buffer: [Element] = []
        var head = 0
        var buffered = 0
        /// The connection whose sink may push: an older one's chunks are stale.
        var connection = 0
        /// Whether the reader got anything, on any connection.
        var hasDelivered = false
        /// Reconnections since the last element, for the limit.
        var reconnectionsInARow = 0
        /// The last failure judged and the answer given: asked again about the same failure
        /// (its transport's timeout and the scheduler's deadline can both report one attempt),
        /// the stream answers the same and counts nothing.
        var lastJudged: (attempt: Int, error: ServiceError?, status: Int?, decision: RetryPolicy.Decision)?
        /// The reader waiting for the next element.
        var reader: CheckedContinuation<Element?, any Error>?
        /// The transport waiting for room, paused.
        var writer: (@Sendable () -> Void)?
        /// Tells the current connection its reader took something: while the transport waits,
        /// reading is the stream's progress.
        var onRead: (@Sendable (Int) -> Void)?
        var end: Result<Void, ServiceError>?
        /// The head of the first answer whose body it took, and who waits for it.
        var responseHead: ResponseHead?
        var headWaiters: [CheckedContinuation<ResponseHead, any Error>] = []
    }

    init(decoder: any StreamDecoder<Element>, limit: Int, reconnection: StreamReconnection?) {
        self.limit = max(1, limit)
        self.reconnection = reconnection
        state = Locked(State(decoder: decoder))
    }

    // MARK: - The reader's side

    /// The next element, nil once the stream ended whole, or the error it ended with.
    func nextResult() async -> Result<Element?, ServiceError> {
        do {
            return .success(try await withCheckedThrowingContinuation { continuation in
                let (result, writer, onRead) = state.withLock { state in
                    Self.read(&state, limit: limit, waiting: continuation)
                }
                onRead?(0)
                writer?()
                if let result { continuation.resume(with: result) }
            })
        } catch {
            return .failure(ServiceError(error))
        }
    }

    /// Takes the next element for `reader`, or keeps it waiting: what to hand it now, the
    /// transport to resume, and whom to tell a paused transport's stream was read.
    private static func read(_ state: inout State, limit: Int, waiting reader: CheckedContinuation<Element?, any Error>)
        -> (Result<Element?, ServiceError>?, (@Sendable () -> Void)?, (@Sendable (Int) -> Void)?) {
        if state.head < state.buffer.count {
            let onRead = state.writer == nil ? nil : state.onRead
            return (.success(state.take()), state.release(limit: limit), onRead)
        }
        if let end = state.end { return (end.map { nil }, nil, nil) }
        guard state.reader == nil else {
            return (.failure(.invalidRequest(reason: "a stream is read by one task at a time")), nil, nil)
        }
        state.reader = reader
        return (nil, nil, nil)
    }

    /// The head of the first answer whose body the stream took, or the error it ended with
    /// before any.
    func responseHead() async -> Result<ResponseHead, ServiceError> {
        do {
            return .success(try await withCheckedThrowingContinuation { continuation in
                let known: Result<ResponseHead, ServiceError>? = state.withLock { state in
                    if let head = state.responseHead { return .success(head) }
                    if let end = state.end { return .failure(Self.noHead(after: end)) }
                    state.headWaiters.append(continuation)
                    return nil
                }
                if let known { continuation.resume(with: known) }
            })
        } catch {
            return .failure(ServiceError(error))
        }
    }

    /// Ends the stream with `outcome` (only the first counts), and wakes its reader, its
    /// transport, and whoever waits for a head that will not come.
    func finish(_ outcome: Result<Void, ServiceError>) {
        typealias Woken = (CheckedContinuation<Element?, any Error>?, (@Sendable () -> Void)?, [CheckedContinuation<ResponseHead, any Error>])
        let (reader, writer, headWaiters) = state.withLock { state -> Woken in
            guard state.end == nil else { return (nil, nil, []) }
            // What arrived stays readable, then the end or the error; a cancel ends the reading
            // at once.
            if case .failure(.cancelled) = outcome { state.dropBuffer() }
            state.end = outcome
            defer { state.reader = nil; state.writer = nil; state.onRead = nil; state.headWaiters = [] }
            // A reader waits only on an empty buffer.
            return (state.reader, state.writer, state.headWaiters)
        }
        writer?()
        reader?.resume(with: outcome.map { Element?.none })
        for waiter in headWaiters { waiter.resume(throwing: Self.noHead(after: outcome)) }
    }

    /// What a stream that ended with `end` before taking an answer tells who waits for its
    /// head: its error (ending whole without an answer does not happen, and would read so).
    private static func noHead(after end: Result<Void, ServiceError>) -> ServiceError {
        if case .failure(let error) = end { return error }
        return .badServerResponse(URLError(.zeroByteResource))
    }

    var isFinished: Bool { state.withLock { $0.end != nil } }

    var reconnects: Bool { reconnection != nil }

    // MARK: - The scheduler's side

    func makeSink(onHead: (@Sendable (ResponseHead) -> Void)? = nil, progress: @escaping @Sendable (Int) -> Void) -> any StreamSinking {
        let (connection, headers) = state.withLock { state in
            state.connection += 1
            state.onRead = progress
            return (state.connection, state.decoder.startConnection())
        }
        return StreamSink(channel: self, connection: connection, headers: headers, onHead: onHead, progress: progress)
    }

    func retryDecision(for attempt: RetryPolicy.FailedAttempt) -> RetryPolicy.Decision {
        state.withLock { state in
            if let last = state.lastJudged, last.attempt == attempt.attempt, last.error == attempt.error,
               last.status == attempt.statusCode {
                return last.decision
            }
            let decision = decide(attempt, &state)
            state.lastJudged = (attempt.attempt, attempt.error, attempt.statusCode, decision)
            return decision
        }
    }

    private func decide(_ attempt: RetryPolicy.FailedAttempt, _ state: inout State) -> RetryPolicy.Decision {
        guard let reconnection else { return state.hasDelivered ? .doNotRetry : .usePolicy }
        guard state.end == nil else { return .doNotRetry }
        // Every failure counts, whatever decides on it: the policy too retries only as long as
        // the stream allows.
        state.reconnectionsInARow += 1
        guard state.reconnectionsInARow <= reconnection.maximumInARow else { return .doNotRetry }
        // A request that is not safe to repeat is not sent again for a lost connection.
        guard HTTPVerb(rawValue: attempt.method).isIdempotent, let error = attempt.error,
              error.isConnectivityFailure || error == .timedOut else { return .usePolicy }
        return .retry(after: state.decoder.reconnectionDelay ?? reconnection.delay)
    }

    // MARK: - A connection's sink

    func accepts(_ head: ResponseHead) -> Bool {
        state.withLock { $0.decoder.accepts(head) }
    }

    /// A connection took `head`'s body: the first such head is the stream's.
    func took(_ head: ResponseHead) {
        let waiters = state.withLock { state -> [CheckedContinuation<ResponseHead, any Error>] in
            guard state.responseHead == nil else { return [] }
            state.responseHead = head
            defer { state.headWaiters = [] }
            return state.headWaiters
        }
        for waiter in waiters { waiter.resume(returning: head) }
    }

    /// Decodes a chunk of `connection` into the buffer, or throws why the transport must stop:
    /// a stale connection or a stream that ended (`.cancelled`), a full buffer, bad framing.
    func push(_ chunk: Data, from connection: Int) throws(ServiceError) {
        let pushed = state.withLock { state in
            Result { () throws(ServiceError) in
                guard state.connection == connection, state.end == nil else { throw .cancelled }
                var elements: [Element] = []
                try state.decoder.decode(chunk, into: &elements)
                return try state.add(elements, limit: limit)
            }
        }
        let (reader, first) = try pushed.get()
        if let reader, let first { reader.resume(returning: first) }
    }

    /// The body of `connection` ended whole: its last bytes may complete an element.
    func endOfBody(from connection: Int) {
        let (reader, first) = state.withLock { state -> (CheckedContinuation<Element?, any Error>?, Element?) in
            guard state.connection == connection, state.end == nil else { return (nil, nil) }
            var elements: [Element] = []
            state.decoder.finish(into: &elements)
            // Past the limit or not: the transport is done, and these are its last.
            return (try? state.add(elements, limit: .max)) ?? (nil, nil)
        }
        if let reader, let first { reader.resume(returning: first) }
    }

    /// Whether the buffer has room; if not, `resume` is kept and called once it has.
    func hasRoom(orWhenRoom resume: @escaping @Sendable () -> Void) -> Bool {
        state.withLock { state in
            guard state.end == nil, state.buffered >= limit else { return true }
            state.writer = resume
            return false
        }
    }
}

extension StreamChannel.State {
    /// Takes the first element (the buffer is not empty).
    mutating func take() -> Element {
        let element = buffer[head]
        buffered -= decoder.size(of: element)
        head += 1
        if head == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            head = 0
        } else if head > 64, head * 2 > buffer.count {
            buffer.removeFirst(head)
            head = 0
        }
        return element
    }

    /// The transport to resume, once the reader took half of what the buffer may hold.
    mutating func release(limit: Int) -> (@Sendable () -> Void)? {
        guard writer != nil, buffered <= limit / 2 else { return nil }
        defer { writer = nil }
        return writer
    }

    mutating func dropBuffer() {
        buffer = []
        head = 0
        buffered = 0
    }

    /// Adds `elements`: the first goes straight to a waiting reader, if there is one.
    mutating func add(_ elements: [Element], limit: Int) throws(ServiceError)
        -> (CheckedContinuation<Element?, any Error>?, Element?) {
        guard !elements.isEmpty else { return (nil, nil) }
        hasDelivered = true
        reconnectionsInARow = 0
        var rest = elements[...]
        var handed: (CheckedContinuation<Element?, any Error>?, Element?) = (nil, nil)
        if let reader {
            self.reader = nil
            handed = (reader, rest.removeFirst())
        }
        for element in rest { buffered += decoder.size(of: element) }
        buffer.append(contentsOf: rest)
        if limit < .max / 2, buffered > 2 * limit { throw .streamBufferFull(limit: limit) }
        return handed
    }
}

/// How an event stream reconnects after its connection is lost.
struct StreamReconnection: Sendable {
    /// Seconds before a reconnection, when the server sent no `retry`.
    var delay: TimeInterval
    /// Reconnections without an event between them before the stream fails.
    var maximumInARow: Int
}

/// What the scheduler needs of a stream, whatever its elements: a sink for each attempt, and
/// whether a failed attempt may be tried again.
protocol StreamIntake: AnyObject, Sendable {
    /// Whether it reconnects after a lost connection, as long as it makes progress.
    var reconnects: Bool { get }
    /// The sink for a new connection; `onHead` is told of the head it is offered, `progress`
    /// the bytes of each chunk it takes.
    func makeSink(onHead: (@Sendable (ResponseHead) -> Void)?, progress: @escaping @Sendable (Int) -> Void) -> any StreamSinking
    /// Whether an attempt that failed may be tried again: never once a stream that does not
    /// reconnect delivered something.
    func retryDecision(for attempt: RetryPolicy.FailedAttempt) -> RetryPolicy.Decision
    /// Ends the stream with its caller's outcome.
    func finish(_ outcome: Result<Void, ServiceError>)
}

/// A connection's sink, with the headers that connection must send.
protocol StreamSinking: ResponseBodySink {
    /// What the connection asks for besides the request (`Last-Event-ID`).
    var headers: HeaderFields { get }
    /// Whether it took a response's body.
    var isAccepted: Bool { get }
    /// The body ended whole.
    func endOfBody()
}

/// One connection's sink into its stream's channel.
final class StreamSink<Element: Sendable>: StreamSinking, @unchecked Sendable {
    // Safety: immutable but for `accepted`, behind its lock.
    private let channel: StreamChannel<Element>
    private let accepted = Locked(false)
    private let connection: Int
    let headers: HeaderFields
    private let onHead: (@Sendable (ResponseHead) -> Void)?
    private let progress: @Sendable (Int) -> Void

    init(channel: StreamChannel<Element>, connection: Int, headers: HeaderFields, onHead: (@Sendable (ResponseHead) -> Void)?,
         progress: @escaping @Sendable (Int) -> Void) {
        self.channel = channel
        self.connection = connection
        self.headers = headers
        self.onHead = onHead
        self.progress = progress
    }

    func accept(_ head: ResponseHead) throws -> Bool {
        onHead?(head)
        guard (200..<300).contains(head.statusCode) else { return false }
        guard channel.accepts(head) else {
            throw ServiceError.badServerResponse(URLError(.badServerResponse, userInfo: [
                NSLocalizedDescriptionKey: "the server answered \(head.value(forHTTPHeaderField: "Content-Type") ?? "no content type") to a request for an event stream"]))
        }
        accepted.withLock { $0 = true }
        channel.took(head)
        return true
    }

    var isAccepted: Bool { accepted.withLock { $0 } }

    func write(_ chunk: Data) throws {
        try channel.push(chunk, from: connection)
        progress(chunk.count)
    }

    func hasRoom(orWhenRoom resume: @escaping @Sendable () -> Void) -> Bool {
        channel.hasRoom(orWhenRoom: resume)
    }

    func endOfBody() {
        channel.endOfBody(from: connection)
    }
}
