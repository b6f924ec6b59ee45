import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The default transport: a `URLSession` data task per request, through a session of its own
/// whose delegate enforces each request's ``TransportPolicy``.
///
/// - Redirects follow the policy; one to another origin drops the credentials and the headers
///   the client added for its own server (FoundationNetworking copies every header).
/// - The body is counted as it arrives, decompressed, and reading stops past the limit (a gzip
///   bomb of 1 MB on the wire would otherwise be inflated whole in memory).
/// - A challenge for HTTP authentication (a 401 with `WWW-Authenticate: Basic`) is declined,
///   so the 401 comes back as the answer: FoundationNetworking otherwise waits forever for a
///   credential (swift-corelibs-foundation issue 5456).
///
/// Its session keeps no cookies, whatever the configuration says: a cookie goes as a `Cookie`
/// header of the request (a client's default header, say), which deduplication and the cache
/// count, so that no user's answer reaches another.
///
/// On Linux its session has no `URLCache`: FoundationNetworking looks a task up in the cache on
/// another queue before it starts loading, and a task cancelled in that window traps the
/// process ("Trying to access a behaviour for a task that in not in the registry"), and the
/// scheduler cancels a running task whenever its last caller leaves.
public final class URLSessionTransport: HTTPTransport {
    /// The session that runs the tasks: made by the transport, with its delegate (and on Linux a
    /// delegate queue that runs the session's callbacks on one serial dispatch queue; see
    /// <doc:PlatformNotes>).
    public let session: URLSession
    let delegate: TransportSessionDelegate
    /// Open until ``invalidate()``; every task of the session is made inside it, since
    /// FoundationNetworking traps on a task asked of an invalidated session.
    public let lifecycle = TransportLifecycle()

    /// A transport over a session of its own with `configuration` (a copy; on Linux without
    /// its `URLCache`).
    ///
    /// - Parameter configuration: the session's configuration; its `URLCache` is removed (see the
    ///   README's platform notes).
    public init(configuration: URLSessionConfiguration = .ephemeral) {
        let copy = (configuration.copy() as? URLSessionConfiguration) ?? configuration
        #if canImport(FoundationNetworking)
        copy.urlCache = nil
        #endif
        // Cookies the session added on the wire would tell users apart where the scheduler
        // cannot see them: one user's call shared with another, one's cached answer given to
        // the other. A cookie is a `Cookie` header the app sends, which counts.
        copy.httpCookieStorage = nil
        copy.httpShouldSetCookies = false
        copy.httpCookieAcceptPolicy = .never
        delegate = TransportSessionDelegate()
        #if canImport(FoundationNetworking)
        session = URLSession(configuration: copy, delegate: delegate, delegateQueue: SessionDelegateQueue())
        #else
        session = URLSession(configuration: copy, delegate: delegate, delegateQueue: nil)
        #endif
    }

    /// A transport over a session like `session`: its configuration, with the transport's own
    /// delegate (which the policy needs). `session` itself sends nothing.
    ///
    /// - Parameter session: a session you made: its delegate is not this transport's, so redirects and
    ///   size limits are not enforced by it.
    public convenience init(session: URLSession) {
        self.init(configuration: session.configuration)
    }

    deinit {
        session.finishTasksAndInvalidate()
    }

    /// Stops the session's `URLCache` (Apple platforms; there is none on Linux) from answering
    /// or storing: a scheduler with a ``ResponseCache`` of its own calls this, so that there is
    /// one cache, which the scheduler sees.
    func leaveCachingToTheScheduler() {
        delegate.leavesCachingToTheScheduler.withLock { $0 = true }
    }

    /// Shuts the transport down, for good: every scheduler using it ends the callers it holds
    /// (waiting, backing off or on the wire) with ``ServiceError/cancelled``, the session's
    /// tasks are cancelled and the session released, and a request sent afterwards ends with
    /// ``ServiceError/transportClosed``. Calling it again does nothing.
    public func invalidate() {
        guard lifecycle.close() else { return }
        session.invalidateAndCancel()
    }

    /// The session's `httpMaximumConnectionsPerHost`; on Linux, at most 4 for a host near by.
    ///
    /// FoundationNetworking runs tasks on libcurl, which keeps at most four idle connections
    /// per transfer in progress in the session: when a transfer ends while fewer run, it closes
    /// the oldest idle connection, and the next transfer opens a new one. Six at once to one
    /// host on loopback made hundreds of connections per 10,000 requests; four never lose
    /// theirs. A distant host gets the session's whole count
    /// (``maximumConnectionsPerDistantHost``).
    public var maximumConnectionsPerHost: Int {
        #if canImport(FoundationNetworking)
        min(session.configuration.httpMaximumConnectionsPerHost, Self.connectionsKeptPerTransfer)
        #else
        session.configuration.httpMaximumConnectionsPerHost
        #endif
    }

    /// The session's `httpMaximumConnectionsPerHost`: where answers take 5 ms or more, a
    /// connection libcurl closes between bursts costs little beside what the two more carry
    /// (with 50 ms answers over HTTP/1.1, four connections took 1.4 times as long as six for
    /// a burst of 200).
    public var maximumConnectionsPerDistantHost: Int {
        session.configuration.httpMaximumConnectionsPerHost
    }

    /// The idle connections libcurl keeps per transfer in progress (its connection cache is
    /// four times the number of transfers, unless the multi handle sets `MAXCONNECTS`, which
    /// FoundationNetworking does not).
    static let connectionsKeptPerTransfer = 4

    /// Creates and resumes a data task for `request`; a body file is streamed to it from disk.
    ///
    /// - Parameters:
    ///   - request: the request to send.
    ///   - policy: the redirects to follow and the response size limit.
    ///   - progress: told how much of the body has gone out; nil when nobody asked.
    ///   - completion: called exactly once with the response or the error, on any thread.
    public func startTask(
        for request: TransportRequest,
        policy: TransportPolicy,
        progress: (@Sendable (TransferProgress) -> Void)?,
        completion: @escaping @Sendable (Result<TransportResponse, any Error>) -> Void
    ) -> any TransportTask {
        var urlRequest = Self.prepared(request.urlRequest)
        #if !canImport(FoundationNetworking)
        if delegate.leavesCachingToTheScheduler.withLock({ $0 }) { urlRequest.cachePolicy = .reloadIgnoringLocalCacheData }
        #endif
        #if canImport(FoundationNetworking)
        if request.bodyFile == nil, let download = request.responseSink as? any SegmentedSink {
            // FoundationNetworking cannot stop reading a connection: a download is asked for in
            // parts instead, so that no more than one waits in memory.
            let paced = PacedDownload(session: session, lifecycle: lifecycle, delegate: delegate, request: request, sink: download,
                                      policy: policy, completion: completion)
            paced.reprioritize(to: policy.priority)
            paced.start()
            return paced
        }
        #endif
        let made = lifecycle.ifOpen { () -> URLSessionTask in
            if let file = request.bodyFile {
                // An upload task, which sends the file's size as `Content-Length` and reads it a
                // chunk at a time. Not a body stream: FoundationNetworking sends one with both
                // `Content-Length` and `Transfer-Encoding: chunked`, a request servers must refuse.
                urlRequest.httpBody = nil
                return session.uploadTask(with: urlRequest, fromFile: file.url)
            }
            return session.dataTask(with: urlRequest)
        }
        guard let task = made else {
            completion(.failure(ServiceError.transportClosed))
            return ClosedTransportTask()
        }
        // A new task has the default priority: set only another. FoundationNetworking sets it
        // by a synchronous hop onto the session's busy work queue, for a hint it ignores.
        let priority = policy.priority.urlSessionTaskPriority
        if priority != URLSessionTask.defaultPriority { task.priority = priority }
        delegate.register(task, policy: policy, body: request, progress: progress, completion: completion)
        task.resume()
        return task
    }
}

/// What a closed transport returns for a request it did not send: there is nothing to cancel.
struct ClosedTransportTask: TransportTask {
    func cancel() {}
}

extension URLSessionTransport {
    /// The request as this platform's URLSession needs it. FoundationNetworking hands libcurl
    /// the timeout in whole seconds, so 0.5 s would fire at once and 1.5 s at 1 s: round up.
    static func prepared(_ request: URLRequest) -> URLRequest {
        #if canImport(FoundationNetworking)
        let timeout = request.timeoutInterval
        guard timeout > 0, timeout.rounded(.up) != timeout else { return request }
        var rounded = request
        rounded.timeoutInterval = timeout.rounded(.up)
        return rounded
        #else
        return request
        #endif
    }
}

extension URLSessionTask: TransportTask {
    /// Sets `priority`, which HTTP/2 on Apple platforms passes to the server as a stream's
    /// weight; FoundationNetworking keeps it and ignores it.
    ///
    /// - Parameter priority: the priority its call now has.
    public func reprioritize(to priority: RequestPriority) {
        self.priority = priority.urlSessionTaskPriority
    }
}

extension RequestPriority {
    /// The `URLSessionTask.priority` of a task at this priority.
    var urlSessionTaskPriority: Float {
        switch self {
        case .background: 0.1
        case .low: URLSessionTask.lowPriority
        case .normal: URLSessionTask.defaultPriority
        case .high: URLSessionTask.highPriority
        case .critical: 1
        }
    }
}
