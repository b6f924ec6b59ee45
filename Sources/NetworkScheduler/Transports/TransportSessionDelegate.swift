import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The delegate of a ``URLSessionTransport``'s session: collects each task's body within its
/// size limit, applies its redirect policy, declines HTTP authentication challenges, and calls
/// the task's completion once it ends.
///
/// A session delegate, not a task's: FoundationNetworking asks only the session's about
/// redirects. Its callbacks come on the session's serial delegate queue.
final class TransportSessionDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // Safety: the only mutable state is in `tasks`, behind its lock.

    typealias Completion = @Sendable (Result<TransportResponse, any Error>) -> Void

    typealias Progress = @Sendable (TransferProgress) -> Void

    /// One task's policy, completion and what it received so far.
    private struct Record {
        let policy: TransportPolicy
        let completion: Completion
        /// The body's length, for a transport that does not tell it.
        let bodyLength: Int64?
        let progress: Progress?
        /// Where an accepted body goes instead of `body`.
        let sink: (any ResponseBodySink)?
        /// Whether the sink took the body.
        var isSunk = false
        /// Why the sink stopped the task, if it did.
        var sinkError: (any Error)?
        var body = Data()
        /// Set once the body passed the limit: the task is cancelled, and reports that.
        var isTooLarge = false
        /// Set once an authentication challenge was declined: the task then ends as cancelled,
        /// but its 401 is the answer.
        var declinedChallenge = false
        /// Whether it is a part of a paced download, which yields to the others.
        let isPart: Bool
        /// The protocol its answer came over, from its metrics (Apple platforms only:
        /// FoundationNetworking never sends them).
        var networkProtocol: String?
    }

    /// The running tasks' records, by task identifier, and when the last task that was not a
    /// paced download's part ended.
    private struct Registry {
        var records: [Int: Record] = [:]
        /// Uptime, in nanoseconds; 0 before any ended.
        var othersLastEnded: UInt64 = 0

        subscript(_ id: Int) -> Record? {
            get { records[id] }
            set { records[id] = newValue }
        }

        /// Forgets a task that ended at `now`, and returns its record.
        mutating func ended(_ id: Int, at now: UInt64) -> Record? {
            let record = records.removeValue(forKey: id)
            if record?.isPart == false { othersLastEnded = now }
            return record
        }
    }

    private let tasks = Locked(Registry())
    /// Set when the scheduler has a cache of its own: then the session's `URLCache` (Apple
    /// platforms) neither answers nor stores, so that there is one cache.
    let leavesCachingToTheScheduler = Locked(false)

    #if !canImport(FoundationNetworking)
    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, willCacheResponse proposedResponse: CachedURLResponse,
                    completionHandler: @escaping @Sendable (CachedURLResponse?) -> Void) {
        completionHandler(leavesCachingToTheScheduler.withLock { $0 } ? nil : proposedResponse)
    }
    #endif

    /// Keeps `task`'s policy and completion until it ends; `isPart` for a part of a paced
    /// download (``PacedDownload``), which does not count among the others.
    func register(_ task: URLSessionTask, policy: TransportPolicy, body: TransportRequest, progress: Progress?,
                  isPart: Bool = false, completion: @escaping Completion) {
        let record = Record(policy: policy, completion: completion, bodyLength: body.bodyLength, progress: progress,
                            sink: body.responseSink, isPart: isPart)
        tasks.withLock { $0[task.taskIdentifier] = record }
    }

    /// Whether a task other than a paced download's parts runs, or ended after `since` and less
    /// than `window` nanoseconds ago (uptimes): a download then asks for small parts, so that
    /// they wait little for it. One that ended before the download began does not count.
    func othersAreActive(since: UInt64 = 0, within window: UInt64) -> Bool {
        let now = DispatchTime.now().uptimeNanoseconds
        return tasks.withLock { tasks in
            tasks.records.values.contains { !$0.isPart } || (tasks.othersLastEnded > since && now &- tasks.othersLastEnded < window)
        }
    }

    // MARK: - The request body

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        didSendBodyData bytesSent: Int64,
        totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) {
        guard let (progress, length) = tasks.withLock({ tasks in
            tasks[task.taskIdentifier].flatMap { record in record.progress.map { ($0, record.bodyLength) } }
        }) else { return }
        progress(TransferProgress(bytesSent: totalBytesSent,
                                  bytesExpectedToSend: totalBytesExpectedToSend > 0 ? totalBytesExpectedToSend : length))
    }

    // MARK: - The body

    func urlSession(
        _ session: URLSession,
        dataTask: URLSessionDataTask,
        didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        // One pass under the lock for a task without a sink, as every data call is.
        let (sink, tooLarge) = tasks.withLock { tasks -> ((any ResponseBodySink)?, Bool) in
            guard var record = tasks[dataTask.taskIdentifier] else { return (nil, false) }
            if let sink = record.sink { return (sink, false) }
            guard response.expectedContentLength > Int64(record.policy.maximumResponseSize) else { return (nil, false) }
            record.isTooLarge = true
            tasks[dataTask.taskIdentifier] = record
            return (nil, true)
        }
        var stops = tooLarge
        if let sink {
            // A sink keeps its own limit.
            var isSunk = false
            var sinkError: (any Error)?
            do {
                isSunk = try (response as? HTTPURLResponse).map { try sink.accept(ResponseHead($0)) } ?? false
            } catch {
                sinkError = error
            }
            stops = sinkError != nil
            tasks.withLock { tasks in
                tasks[dataTask.taskIdentifier]?.isSunk = isSunk
                tasks[dataTask.taskIdentifier]?.sinkError = sinkError
            }
        }
        completionHandler(stops ? .cancel : .allow)
        // FoundationNetworking does not wait for the disposition: cancel the task itself.
        if stops { dataTask.cancel() }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        // One pass under the lock for a body collected in memory; a sunk one is written after it.
        let (sink, tooLarge) = tasks.withLock { tasks -> ((any ResponseBodySink)?, Bool) in
            guard var record = tasks[dataTask.taskIdentifier], !record.isTooLarge, record.sinkError == nil else { return (nil, false) }
            if record.isSunk { return (record.sink, false) }
            // Emptied in place first, so that appending does not copy the body.
            tasks[dataTask.taskIdentifier] = nil
            if record.body.count + data.count > record.policy.maximumResponseSize {
                record.isTooLarge = true
                record.body = Data()
            } else {
                record.body.append(data)
            }
            tasks[dataTask.taskIdentifier] = record
            return (nil, record.isTooLarge)
        }
        if let sink {
            // On the session's serial delegate queue: the chunks reach the sink in order.
            do {
                try sink.write(data)
            } catch {
                tasks.withLock { $0[dataTask.taskIdentifier]?.sinkError = error }
                dataTask.cancel()
                return
            }
            #if !canImport(FoundationNetworking)
            // A suspended task stops reading its connection. Resumed through this serial queue,
            // so that the resume never overtakes the suspend. FoundationNetworking cannot: its
            // suspend takes the transfer off libcurl, and its resume starts it over.
            if !sink.hasRoom(orWhenRoom: { [dataTask] in session.delegateQueue.addOperation { dataTask.resume() } }) {
                dataTask.suspend()
            }
            #endif
        }
        if tooLarge { dataTask.cancel() }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let now = DispatchTime.now().uptimeNanoseconds
        guard let record = tasks.withLock({ $0.ended(task.taskIdentifier, at: now) }) else { return }
        let response = task.response as? HTTPURLResponse
        if let sinkError = record.sinkError {
            record.completion(.failure(sinkError))
        } else if record.isTooLarge {
            record.completion(.failure(ServiceError.responseTooLarge(limit: record.policy.maximumResponseSize)))
        } else if let error, !(record.declinedChallenge && response != nil) {
            record.completion(.failure(error))
        } else if let response {
            record.completion(.success(TransportResponse(data: record.body,
                                                         head: ResponseHead(response, httpVersion: record.networkProtocol))))
        } else {
            record.completion(.failure(URLError(.badServerResponse)))
        }
    }

    #if !canImport(FoundationNetworking)
    /// Notes the protocol of the task's answer (`h2`, `h3`, `http/1.1`), which its host's budget
    /// follows. URLSession sends a task's metrics before it completes it.
    func urlSession(_ session: URLSession, task: URLSessionTask, didFinishCollecting metrics: URLSessionTaskMetrics) {
        guard let name = metrics.transactionMetrics.last?.networkProtocolName else { return }
        tasks.withLock { tasks in tasks[task.taskIdentifier]?.networkProtocol = name }
    }
    #endif

    // MARK: - Redirects and challenges

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest,
        completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        let policy = tasks.withLock { $0[task.taskIdentifier]?.policy } ?? TransportPolicy()
        completionHandler(policy.request(following: request, from: response.url ?? task.currentRequest?.url))
    }

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        guard Self.httpAuthenticationMethods.contains(challenge.protectionSpace.authenticationMethod) else {
            // Server trust and client certificates: the platform's own handling.
            completionHandler(.performDefaultHandling, nil)
            return
        }
        // The scheduler has no credential to offer for HTTP authentication: the 401 is the
        // answer (its own token refresh handles bearer tokens).
        tasks.withLock { tasks in tasks[task.taskIdentifier]?.declinedChallenge = true }
        completionHandler(.rejectProtectionSpace, nil)
    }

    private static let httpAuthenticationMethods = [
        NSURLAuthenticationMethodDefault, NSURLAuthenticationMethodHTTPBasic, NSURLAuthenticationMethodHTTPDigest,
        NSURLAuthenticationMethodHTMLForm,
    ]
}
