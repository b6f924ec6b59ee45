import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A body sink that can pick up where it stopped on a new connection: a download's file.
protocol ContinuableSink: ResponseBodySink {
    /// Whether the body it is taking can be asked for again from a byte on: the server named
    /// its version.
    var canContinue: Bool { get }

    /// The headers that ask for the rest of the body, once what was written is all written;
    /// nil if the server named no version to ask for (then nothing changes). After it, the
    /// sink takes the new connection's head as it took the first.
    func continuationHeaders() -> [String: String]?
}

/// A download over a FoundationNetworking session, with its memory bounded by its disk.
///
/// FoundationNetworking reads the connection as fast as it comes and queues every chunk for
/// the session's delegate: when the disk is slower than the network (page-cache writeback on a
/// 1 GiB download), the chunks waiting grew past 100 MiB. Here the delegate only hands each
/// chunk to a writer of the download's own, which counts what waits. Past `limit` bytes, the
/// task is cancelled (so the connection stops being read); once the writer has written
/// everything, the download goes on from there on a new data task, with `Range` and `If-Range`
/// naming the version the server gave. A body without a version cannot be continued, and is
/// read as it comes.
///
/// It is the transport's task: cancelling it cancels whichever data task runs, and its
/// completion is called once, after the writer wrote everything it was given.
final class PacedDownload: TransportTask, ResponseBodySink, @unchecked Sendable {
    // Safety: the mutable state is in `state`, behind its lock; the sink is written to only on
    // `writer`, a serial queue.

    private let session: URLSession
    private let delegate: TransportSessionDelegate
    private let request: TransportRequest
    private let policy: TransportPolicy
    private let sink: any ContinuableSink
    private let completion: @Sendable (Result<TransportResponse, any Error>) -> Void
    private let limit: Int
    private let writer = DispatchQueue(label: "NetworkScheduler.PacedDownload")
    private let state = Locked(State())

    private struct State {
        var task: URLSessionTask?
        /// Bytes handed to the writer and not yet written.
        var waiting = 0
        /// The task was cancelled to let the writer catch up: its end is not the download's.
        var isPausing = false
        var isCancelled = false
        /// Why the writer stopped, if it did.
        var writeError: (any Error)?
        var priority: RequestPriority?
    }

    init(session: URLSession, delegate: TransportSessionDelegate, request: TransportRequest, sink: any ContinuableSink,
         policy: TransportPolicy, limit: Int = 16 << 20,
         completion: @escaping @Sendable (Result<TransportResponse, any Error>) -> Void) {
        self.session = session
        self.delegate = delegate
        self.request = request
        self.sink = sink
        self.policy = policy
        self.limit = limit
        self.completion = completion
    }

    /// Starts the first data task.
    func start(_ urlRequest: URLRequest) {
        let task = session.dataTask(with: urlRequest)
        var forDelegate = request
        forDelegate.responseSink = self
        delegate.register(task, policy: policy, body: forDelegate, progress: nil) { [self] in ended($0) }
        let (cancelled, priority) = state.withLock { state in
            state.task = task
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

    func write(_ chunk: Data) throws {
        let (failed, pause) = state.withLock { state -> ((any Error)?, URLSessionTask?) in
            guard state.writeError == nil else { return (state.writeError, nil) }
            state.waiting += chunk.count
            guard state.waiting > limit, !state.isPausing, !state.isCancelled, sink.canContinue else { return (nil, nil) }
            state.isPausing = true
            return (nil, state.task)
        }
        if let failed { throw failed }
        writer.async { [self] in
            let error: (any Error)?
            do {
                try sink.write(chunk)
                error = nil
            } catch let writeError {
                error = writeError
            }
            let task = state.withLock { state -> URLSessionTask? in
                state.waiting -= chunk.count
                guard let error, state.writeError == nil else { return nil }
                state.writeError = error
                return state.task
            }
            task?.cancel()
        }
        // Stops reading the connection; the rest is asked for once the writer caught up.
        pause?.cancel()
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

    /// A data task ended: once the writer has written all it was given, either the download
    /// goes on from there (the task was cancelled to let the writer catch up), or it ends.
    private func ended(_ result: Result<TransportResponse, any Error>) {
        writer.async { [self] in
            let (isPausing, isCancelled, writeError) = state.withLock { state in
                defer { state.isPausing = false }
                return (state.isPausing, state.isCancelled, state.writeError)
            }
            if let writeError { return completion(.failure(writeError)) }
            guard isPausing, !isCancelled, case .failure = result, let headers = sink.continuationHeaders() else {
                return completion(result)
            }
            var urlRequest = URLSessionTransport.prepared(request.urlRequest)
            for (name, value) in headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
            start(urlRequest)
        }
    }
}
