import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A body sink that can take its body in parts, each asked for with `Range`: a download's file.
protocol SegmentedSink: ResponseBodySink {
    /// Whether it took the last head's body.
    var isAccepted: Bool { get }

    /// Whether the body ended at the last part's end, its whole length unknown: a 416 for the
    /// next part then ends the download.
    var endedWithoutLength: Bool { get }

    /// The headers that ask for the next part, of `size` bytes at most, after what was taken;
    /// nil when the body is whole; none (`[:]`) to ask for the whole body again, when the rest
    /// cannot be asked for by the version the server named. The first is asked for before any
    /// head.
    func nextSegment(size: Int64) -> HeaderFields?

}

/// A download over a FoundationNetworking session, with its memory bounded.
///
/// FoundationNetworking reads a connection as fast as it comes and queues every chunk for the
/// session's delegate: when the delegate or the disk is slower than the network, the chunks
/// waiting grow without bound (a raw data task downloading 1 GiB from nginx on loopback grew
/// the process by up to 230 MB). Here the body is asked for `segment` bytes at a time with
/// `Range` (and, after the first, `If-Range` naming the version the server gave), one data
/// task after another on the same connection, so that no more than a part waits in memory.
///
/// Each chunk is written as the session's delegate queue hands it over, as FoundationNetworking
/// writes a download task's file on its own queue: a hop to a writer queue of its own for each
/// 16 KiB chunk spread a download over a dozen threads, slower and with more memory kept by the
/// allocator (Benchmarks/RUNS.md, fifty-second run). The part's end comes through the same
/// serial queue, after its last chunk is written, and the next part is asked for then.
///
/// A server that ignores ranges answers the whole body to the first request, read as it comes;
/// one that names no version gets the whole body in one request after its first part (the rest
/// cannot be asked for by its version); a part of another version than `If-Range` named fails
/// the attempt; a changed file (a 200 to an `If-Range`) starts over, as a resume does. When
/// `Content-Range` gives no length (`*`), the body ends at the first part shorter than asked,
/// or where the server finds nothing past the last (416).
///
/// It is the transport's task: cancelling it cancels whichever data task runs, and its
/// completion is called once, after everything was written.
///
/// FoundationNetworking reads a connection that has data before it turns to another: a quick
/// GET of the same session waited for the part being read to end (up to 20 ms for 8 MiB on
/// loopback). While any other task of the session runs, or ended in the last 100 ms while the
/// download ran, the parts are small (`yieldingSegment`), so that the others wait a fraction of
/// a millisecond.
final class PacedDownload: TransportTask, ResponseBodySink, @unchecked Sendable {
    // Safety: the mutable state is in `state`, behind its lock; the sink is written to only on
    // the session's serial delegate queue.

    private let session: URLSession
    /// The transport's: each part's task is made only while the session is open.
    private let lifecycle: TransportLifecycle
    private let delegate: TransportSessionDelegate
    private let request: TransportRequest
    private let policy: TransportPolicy
    private let sink: any SegmentedSink
    private let completion: @Sendable (Result<TransportResponse, any Error>) -> Void
    private let segment: Int64
    /// The part's size while other tasks of the session are active.
    private let yieldingSegment: Int64
    /// When it began (uptime): a task of the session that ended before does not make it yield.
    private let began = DispatchTime.now().uptimeNanoseconds
    private let state = Locked(State())

    private struct State {
        var task: URLSessionTask?
        var isCancelled = false
        var priority: RequestPriority?
        /// Whether the last request asked for a part; the first asks without one after a 416.
        var asksInParts = true
        /// The answer to the last part taken, which ends the download if the server finds
        /// nothing past it.
        var lastPart: TransportResponse?
    }

    init(session: URLSession, lifecycle: TransportLifecycle, delegate: TransportSessionDelegate, request: TransportRequest, sink: any SegmentedSink,
         policy: TransportPolicy, segment: Int64 = 8 << 20, yieldingSegment: Int64 = 256 << 10,
         completion: @escaping @Sendable (Result<TransportResponse, any Error>) -> Void) {
        self.session = session
        self.lifecycle = lifecycle
        self.delegate = delegate
        self.request = request
        self.sink = sink
        self.policy = policy
        self.segment = segment
        self.yieldingSegment = min(yieldingSegment, segment)
        self.completion = completion
    }

    /// Asks for the first part.
    func start() {
        send(sink.nextSegment(size: nextSize) ?? [:])
    }

    /// The next part's size: small while other tasks of the session are active.
    private var nextSize: Int64 {
        delegate.othersAreActive(since: began, within: 100_000_000) ? yieldingSegment : segment
    }

    private func send(_ headers: HeaderFields) {
        var urlRequest = URLSessionTransport.prepared(request.urlRequest)
        // The part asked for now, whatever an earlier attempt's resume asked for.
        for name in ["Range", "If-Range"] { urlRequest.setValue(headers[name], forHTTPHeaderField: name) }
        guard let task = lifecycle.ifOpen({ session.dataTask(with: urlRequest) }) else {
            return completion(.failure(ServiceError.transportClosed))
        }
        var forDelegate = request
        forDelegate.responseSink = self
        delegate.register(task, policy: policy, body: forDelegate, progress: nil, isPart: true) { [self] in ended($0) }
        let (cancelled, priority) = state.withLock { state in
            state.task = task
            state.asksInParts = headers["Range"] != nil
            return (state.isCancelled, state.priority)
        }
        // Only another than the default: FoundationNetworking sets it by a hop onto its busy queue.
        if let priority, priority.urlSessionTaskPriority != URLSessionTask.defaultPriority {
            task.priority = priority.urlSessionTaskPriority
        }
        task.resume()
        if cancelled { task.cancel() }
    }

    // MARK: - The sink the session delegate sees

    func accept(_ head: ResponseHead) throws -> Bool {
        try sink.accept(head)
    }

    /// On the session's serial delegate queue, in order.
    func write(_ chunk: Data) throws {
        try sink.write(chunk)
    }

    // MARK: - The transport's task

    func cancel() {
        let task = state.withLock { state -> URLSessionTask? in
            state.isCancelled = true
            return state.task
        }
        task?.cancel()
    }

    func reprioritize(to priority: RequestPriority) {
        let task = state.withLock { state -> URLSessionTask? in
            state.priority = priority
            return state.task
        }
        task?.priority = priority.urlSessionTaskPriority
    }

    /// What follows a part's end: the next part to ask for, or the download's end.
    private enum Next {
        case part(HeaderFields)
        case end(Result<TransportResponse, any Error>)
    }

    /// A part's data task ended, after everything it brought was written: the next part is
    /// asked for, or the download ends with this result.
    private func ended(_ result: Result<TransportResponse, any Error>) {
        switch next(after: result) {
        case .part(let headers) where !state.withLock({ $0.isCancelled }): send(headers)
        case .part: completion(result)
        case .end(let ending): completion(ending)
        }
    }

    /// What follows `result`, the end of the part asked for last.
    private func next(after result: Result<TransportResponse, any Error>) -> Next {
        guard case .success(let response) = result else { return .end(result) }
        let (askedInParts, lastPart) = state.withLock { ($0.asksInParts, $0.lastPart) }
        if response.statusCode == 416, askedInParts, !sink.isAccepted {
            // Nothing past the last part of a body whose length was not given: it ended there.
            if sink.endedWithoutLength, let lastPart { return .end(.success(lastPart)) }
            // Nothing at the first range: an empty body, most likely. Asked for whole instead.
            return .part([:])
        }
        guard (200..<300).contains(response.statusCode), let headers = sink.nextSegment(size: nextSize) else {
            return .end(result)
        }
        state.withLock { $0.lastPart = response }
        return .part(headers)
    }
}
