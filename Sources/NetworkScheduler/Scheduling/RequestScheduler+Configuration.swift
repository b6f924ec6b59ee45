import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension RequestScheduler {
    /// How a scheduler sends requests and reports on them.
    ///
    /// ```swift
    /// let scheduler = RequestScheduler { configuration in
    ///     configuration.hostBudget = 4
    ///     configuration.callbackQueue = .main // an app that wants completions on main
    ///     configuration.eventMonitors = [metrics]
    /// }
    /// ```
    public struct Configuration: Sendable {
        /// What sends requests: a `URLSession` by default.
        public var transport: any HTTPTransport
        /// Each host's budget of connections: the most attempts it runs at once over HTTP/1.1,
        /// or before it is heard from. nil, and anything above it, means the transport's own
        /// limit (a session's `httpMaximumConnectionsPerHost`; on Linux, 4 for a host that
        /// answers within 5 ms and the session's whole count for one that does not, see
        /// ``HTTPTransport/maximumConnectionsPerDistantHost``). A host that answers over HTTP/2
        /// or HTTP/3 runs ``multiplexedHostBudget`` instead.
        public var hostBudget: Int?
        /// The budget of a host whose answers come over HTTP/2 or HTTP/3, where one connection
        /// carries many requests at once: 128 streams (nginx's default limit; RFC 9113
        /// asks servers to allow at least 100) unless you change it, or the server's own limit
        /// where the transport knows it. Past a server's limit the transport queues the rest
        /// until a stream frees, in the order the scheduler started them. A host starts at
        /// ``hostBudget``, a number of connections, until an answer says or shows what it
        /// speaks (``ResponseHead/httpVersion``, and see <doc:PlatformNotes> for Linux); it goes
        /// back there if it answers over HTTP/1.1 again, and keeps what it learned for the
        /// scheduler's life. `slotsReservedAboveLowPriority` keeps its share of it.
        public var multiplexedHostBudget = 128
        /// How many of a host's budget slots `.low` and `.background` calls leave free, so that a
        /// `.normal` or more urgent request arriving while they fill the host starts at once,
        /// instead of waiting for one of them to end (browsers hold back such "delayable"
        /// requests the same way). 1 by default; at most the budget minus one; 0 lets them
        /// take every slot.
        public var slotsReservedAboveLowPriority: Int
        /// The most streams (``ResponseStream``) open at once per host. They wait, by priority,
        /// in a line of their own beside the host's (named `<host> streams` in health and
        /// events), so that open streams never hold the budget its requests share. 2 by
        /// default. The transport must have the connections for both: see <doc:Streams>.
        public var streamsPerHost = 2
        /// Where completion handlers run. The default is a serial queue of the scheduler's own,
        /// not the main queue, which a command-line tool or a server may never drain. They run
        /// in the order their callers end; those that end while earlier ones still wait for the
        /// queue run in the same block as those, rather than one block each.
        ///
        /// nil runs each completion on the thread that ended its caller (the transport's, a
        /// timer's, or the one that cancelled it), with no hop to a queue: for a server, or any
        /// code whose completions only hand the model on. Completions may then run at the same
        /// time, in any order.
        public var callbackQueue: DispatchQueue?
        /// Observers of every request's events, such as a ``MetricsCollector``.
        public var eventMonitors: [any RequestEvent.Monitor]
        /// When to retry a failed call whose resource sets no policy of its own: by default,
        /// three attempts for requests that are safe to repeat.
        public var retryPolicy: RetryPolicy
        /// Tells whether the network is reachable; with one, requests wait while offline
        /// instead of failing. None by default.
        public var connectivityMonitor: (any ConnectivityMonitor)?
        /// Per priority, the most seconds a call waits for a budget slot at it before it is
        /// promoted one level (and again after the next level's maximum, up to `.critical`), so
        /// that a steady stream of urgent requests cannot keep a sync or an analytics call
        /// waiting forever. Empty by default: strict priority order. Each promotion is a
        /// ``RequestEvent/promoted(_:from:to:)`` event and counts in ``MetricsCollector``.
        ///
        /// ```swift
        /// configuration.maximumWait = [.background: 30, .low: 10]
        /// ```
        public var maximumWait: [RequestPriority: TimeInterval] = [:]
        /// The most requests each host's line holds while they wait for a budget slot; nil (the
        /// default) holds any number. When a request arrives at a full line, the newest of
        /// the least urgent requests waiting there (the arriving one, if none is less urgent
        /// than it) ends with ``ServiceError/lineFull(host:)`` without being sent: a server
        /// under a burst sheds load it cannot serve in time, and never sheds an urgent request
        /// to keep a less urgent one. Requests waiting for dependencies, for their lane, or
        /// in a suspended group are not in the line.
        public var maximumWaitingPerHost: Int?
        /// How many seconds the outcome of a call with an `Idempotency-Key` is kept when every
        /// caller of it left while it was on the wire: such a call is not cancelled (the server
        /// may be processing the POST), and an identical request sent within this window gets
        /// its outcome instead of posting again (one that arrives while it still runs joins
        /// it). 10 by default; 0 keeps nothing, but still lets the call end on the wire.
        public var keptOutcomeWindow: TimeInterval = 10
        /// How many seconds the budget slot of a request whose callers all left (cancelled, or
        /// past their deadlines) stays taken after its task ended: 0.02 by default. Cancelling a
        /// screen's requests one after another (each Swift task of it, or its parent task)
        /// frees a slot with the first, and a waiting request of the same screen took it and
        /// reached the server before its own cancellation arrived; within the grace, the rest
        /// of the burst lands first. A slot freed by an answer is taken again at once. 0 frees
        /// it as the task ends.
        public var cancellationGrace: TimeInterval = 0.02
        /// When a host is paused for every waiting call (a circuit breaker per host, see
        /// ``HostHealth``): on a 429 or 503 with `Retry-After` by default.
        public var hostHealth: HostHealth.Policy = .default
        /// Token-bucket rate limits by host name (`"api.example.com"`), each host its own
        /// bucket: an attempt starts only with a token, in priority order. None by default.
        ///
        /// ```swift
        /// configuration.rateLimits = ["analytics.example.com": HostHealth.RateLimit(requestsPerSecond: 2, burst: 5)]
        /// ```
        public var rateLimits: [String: HostHealth.RateLimit] = [:]
        /// The headers that do not keep two requests from sharing one call, whatever their
        /// case: ``defaultHeadersIgnoredByDeduplication`` unless you change it. Every other
        /// header counts, so requests of different users (`Authorization`, `Cookie`,
        /// `X-Api-Key`) or asking for different answers (`Accept-Language`, `Range`,
        /// `If-None-Match`) never share a call. The cache (``cache``) keys its answers on the
        /// same headers, so that none reaches another user. Add a header only if it never
        /// changes the answer nor who asks; a credential header (``credentialHeaders``) counts
        /// even if it is listed here.
        public var headersIgnoredByDeduplication: Set<String> = Configuration.defaultHeadersIgnoredByDeduplication

        /// The headers that say who a request is for, whatever their case:
        /// ``defaultCredentialHeaders`` unless you add your own (`X-Session-Token`). One list,
        /// one rule: a request's identity always counts them (so neither a call nor a cached
        /// answer is shared across them), and a redirect to another origin (scheme, host or
        /// port) drops them, over either transport.
        public var credentialHeaders: Set<String> = Configuration.defaultCredentialHeaders

        /// The most bytes of body a response may have, counted after decompression, unless its
        /// resource sets its own limit: ``defaultMaximumResponseSize`` (50 MB) unless you change
        /// it. Reading stops past it and the attempt fails with
        /// ``ServiceError/responseTooLarge(limit:)``.
        public var maximumResponseSize: Int = Configuration.defaultMaximumResponseSize

        /// Whether each attempt tells its server how urgent it is, in RFC 9218's `Priority`
        /// header, so that a server sending many answers over one HTTP/2 or HTTP/3 connection
        /// can send the urgent ones' bytes first: true unless you turn it off. The urgency is
        /// the call's priority as its attempt starts (0 for `.critical`, 1 `.high`, 3 `.normal`,
        /// 5 `.low`, 7 `.background`), with `i` for a stream or a download, whose answer is of use
        /// as it arrives; a `.normal` request that is neither sends no header (a server assumes
        /// `u=3`). A `Priority` header of the request's own is sent as it is. The header never
        /// counts in a request's identity: callers at different priorities share one call.
        public var sendsPriorityHeader = true

        /// The HTTP cache its GET and HEAD requests use (see ``ResponseCache``); none unless
        /// you set one. On Apple platforms, give the transport's session no `URLCache` when
        /// you set one, so that there is one cache.
        public var cache: ResponseCache?

        /// Where the scheduler reads the time and sets its timer (deadlines, backoffs, pauses,
        /// rate limits, kept outcomes) and times what it reports (queue waits and wire time in
        /// ``ResponseMetrics`` and events): the system's unless a test gives a virtual one.
        public var clock: any SchedulerClock = .system

        /// 50 MB: more than any JSON answer, less than a gzip bomb.
        public static let defaultMaximumResponseSize = 50 * 1_024 * 1_024

        /// Tracing, request-ID and user-agent headers, and RFC 9218's `Priority`: they differ
        /// between identical requests and never change the answer.
        public static let defaultHeadersIgnoredByDeduplication: Set<String> = [
            "User-Agent", "Priority", "traceparent", "tracestate", "baggage", "X-Request-ID", "X-Correlation-ID",
            "Request-Id", "b3", "X-B3-TraceId", "X-B3-SpanId", "X-B3-ParentSpanId", "X-B3-Sampled",
            "X-B3-Flags", "X-Amzn-Trace-Id", "X-Cloud-Trace-Context", "sentry-trace",
        ]

        /// The credential headers every scheduler knows: `Authorization`, `Proxy-Authorization`,
        /// `Cookie`, and the API-key headers in common use.
        public static let defaultCredentialHeaders: Set<String> = Set(TransportPolicy.credentialHeaders)

        /// A configuration; every parameter has the default described on its property.
        ///
        /// - Parameters:
        ///   - transport: what sends requests.
        ///   - hostBudget: the most attempts per host at once; nil for the transport's limit.
        ///   - slotsReservedAboveLowPriority: slots that low and background calls leave free.
        ///   - callbackQueue: where completion handlers run; nil for the thread that ends each
        ///     caller.
        ///   - eventMonitors: observers of every request's events.
        ///   - retryPolicy: when to retry a failed call.
        ///   - connectivityMonitor: tells whether the network is reachable; none by default.
        ///   - cache: the HTTP cache of GET and HEAD answers; none by default.
        public init(
            transport: any HTTPTransport = URLSessionTransport(),
            hostBudget: Int? = nil,
            slotsReservedAboveLowPriority: Int = 1,
            callbackQueue: DispatchQueue? = DispatchQueue(label: "NetworkScheduler.callbacks"),
            eventMonitors: [any RequestEvent.Monitor] = [],
            retryPolicy: RetryPolicy = .default,
            connectivityMonitor: (any ConnectivityMonitor)? = nil,
            cache: ResponseCache? = nil
        ) {
            self.transport = transport
            self.hostBudget = hostBudget
            self.slotsReservedAboveLowPriority = slotsReservedAboveLowPriority
            self.callbackQueue = callbackQueue
            self.eventMonitors = eventMonitors
            self.retryPolicy = retryPolicy
            self.connectivityMonitor = connectivityMonitor
            self.cache = cache
        }
    }
}
