import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One server: its base URL and what every call to it carries. Several clients share one
/// ``RequestScheduler``, so an app can talk to an auth server and an API server at once.
///
/// ```swift
/// let scheduler = RequestScheduler()
/// let api = APIClient(baseURL: URL(string: "https://api.example.com/v1")!, scheduler: scheduler,
///                     bearerToken: { tokenStore.token })
/// let friends = try await api.value(for: .friends(of: me), priority: .high)
/// ```
public struct APIClient: Sendable {
    /// The URL that resource paths are joined to.
    public var baseURL: URL {
        didSet { refreshDefaults() }
    }
    /// The scheduler that runs this client's requests.
    public var scheduler: RequestScheduler
    /// Headers sent with every call; a resource's own headers win.
    public var defaultHeaders: HeaderFields {
        didSet { refreshDefaults() }
    }
    /// The bearer token for the `Authorization` header, read when each request is built.
    public var bearerToken: @Sendable () -> String? {
        didSet { refreshDefaults() }
    }
    /// The timeout for resources that do not set one.
    public var timeout: TimeInterval {
        didSet { refreshDefaults() }
    }
    /// Whether POST and PATCH requests carry an `Idempotency-Key` unless their resource says
    /// otherwise.
    public var sendsIdempotencyKeys: Bool
    /// Refreshes the token when the server answers 401; its token is the bearer token.
    public var authenticator: TokenAuthenticator?
    /// Which redirects its requests follow unless their resource says otherwise: all by
    /// default, dropping the token, cookies and default headers on the way to another origin.
    public var redirectPolicy: TransportPolicy.Redirects = .follow
    /// Changes each request of this client as each of its attempts starts (a signature, a
    /// header computed then); none by default. See ``RequestAdapter``.
    public var requestAdapter: RequestAdapter?
    /// Gives the fields that carry each caller's context (a trace's `traceparent`) to this
    /// client's server, read as the caller is sent; none by default. See ``ContextPropagation``.
    public var contextPropagation: (any ContextPropagation)? {
        didSet { refreshDefaults() }
    }
    /// The settings above that every request starts from, made once and shared by them all.
    private var defaults: ClientDefaults

    /// A client for the server at `baseURL`, sending through `scheduler`.
    ///
    /// - Parameters:
    ///   - baseURL: the URL resource paths are joined to.
    ///   - scheduler: the scheduler that runs this client's requests.
    ///   - defaultHeaders: headers sent with every call to this server (and to no other).
    ///   - timeout: the most seconds an attempt may take, for resources that set none.
    ///   - sendsIdempotencyKeys: whether POST and PATCH requests carry an `Idempotency-Key`.
    ///   - authenticator: keeps the token and refreshes it, once for everyone, on a 401.
    ///   - bearerToken: read when each request is built; ignored when `authenticator` is given.
    public init(
        baseURL: URL,
        scheduler: RequestScheduler,
        defaultHeaders: HeaderFields = ["Accept": "application/json", "User-Agent": "NetworkScheduler"],
        timeout: TimeInterval = 60,
        sendsIdempotencyKeys: Bool = false,
        authenticator: TokenAuthenticator? = nil,
        bearerToken: @escaping @Sendable () -> String? = { nil }
    ) {
        let bearerToken: @Sendable () -> String? = if let authenticator { { authenticator.token } } else { bearerToken }
        self.baseURL = baseURL
        self.scheduler = scheduler
        self.defaultHeaders = defaultHeaders
        self.timeout = timeout
        self.sendsIdempotencyKeys = sendsIdempotencyKeys
        self.authenticator = authenticator
        self.bearerToken = bearerToken
        defaults = ClientDefaults(baseURL: baseURL, headers: defaultHeaders, bearerToken: bearerToken, timeout: timeout,
                                  contextPropagation: contextPropagation)
    }

    private mutating func refreshDefaults() {
        defaults = ClientDefaults(baseURL: baseURL, headers: defaultHeaders, bearerToken: bearerToken, timeout: timeout,
                                  contextPropagation: contextPropagation)
    }

    /// A resource bound to this client (its base URL, headers and token), ready for its scheduler.
    func resolve<Model>(_ resource: Resource<Model>, stream: (any StreamIntake)? = nil) -> ResolvedResource<Model> {
        var retryPolicy = resource.retryPolicy
        if let stream {
            // What the stream already delivered decides whether it may be sent again; one that
            // reconnects is bounded by its reconnections in a row instead.
            var policy = retryPolicy ?? scheduler.configuration.retryPolicy
            if stream.reconnects { policy.maxAttempts = .max }
            retryPolicy = policy.deciding { stream.retryDecision(for: $0) }
        }
        let submission = Submission(
            .recipe(EndpointRecipe(defaults: defaults, resource: resource)),
            deduplication: resource.deduplication,
            acceptableStatusCodes: resource.acceptableStatusCodes,
            retryPolicy: retryPolicy,
            sendsIdempotencyKey: resource.sendsIdempotencyKey ?? (sendsIdempotencyKeys && !resource.method.isIdempotent),
            authenticator: authenticator,
            redirectPolicy: resource.redirectPolicy ?? redirectPolicy,
            maximumResponseSize: resource.maximumResponseSize,
            originBoundHeaders: defaults.originBoundHeaders,
            tags: resource.tags,
            lane: resource.lane,
            deadline: resource.deadline,
            adapter: requestAdapter,
            downloadDestination: resource.downloadDestination,
            stream: stream,
            cachePolicy: resource.cachePolicy
        )
        return ResolvedResource(submission: submission, decoding: resource.decoding)
    }

    /// The `URLRequest` for a resource, with this client's URL, headers and token.
    ///
    /// - Parameter resource: the resource to build.
    public func urlRequest<Model>(for resource: Resource<Model>) throws(ServiceError) -> URLRequest {
        try EndpointRecipe(defaults: defaults, resource: resource).prepare().urlRequest
    }

    /// The general case: `path` absolute or relative to `base`, with anything that needs
    /// escaping. A relative path's dot segments are resolved below the base path (climbing
    /// above it throws), and its escapes are kept as they are (`%2F` is not encoded again).
    static func componentsURL(base baseURL: URL, path: String, query: [URLQueryItem]) throws(ServiceError) -> URL {
        let isAbsolute = path.contains("://")
        guard var components = isAbsolute
            ? URLComponents(string: path)
            : URLComponents(url: baseURL, resolvingAgainstBaseURL: true)
        else {
            throw .invalidRequest(reason: "\"\(path)\" is not a valid URL")
        }
        try HTTPSyntax.checkScheme(components.scheme)
        if !isAbsolute {
            let relative = try HTTPSyntax.resolvedPath(path.drop(while: { $0 == "/" }))
            components.percentEncodedPath = join(components.percentEncodedPath, relative)
        }
        if !query.isEmpty {
            components.queryItems = (components.queryItems ?? []) + query
            // `+` means a space to most servers, so a literal plus must be escaped.
            components.percentEncodedQuery = components.percentEncodedQuery?
                .replacingOccurrences(of: "+", with: "%2B")
        }
        guard let url = components.url, url.scheme?.isEmpty == false, url.host?.isEmpty == false else {
            throw .invalidRequest(reason: "\"\(path)\" does not make a valid URL with \(baseURL)")
        }
        return url
    }

    /// The base a client joins paths to on the quick path of ``plainURL(plainBase:path:query:)``,
    /// without its trailing slash: made once per client. Nil for a base that is not http(s), or
    /// has a query or fragment.
    static func plainBase(of base: URL) -> String? {
        let base = base.absoluteString
        guard base.hasPrefix("https://") || base.hasPrefix("http://"),
              !base.utf8.contains(where: { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }) else { return nil }
        return base.hasSuffix("/") ? String(base.dropLast()) : base
    }

    /// The common case without `URLComponents` or even `URL`, which cost microseconds and
    /// hundreds of bytes on every request: a base checked by ``plainBase(of:)``, and a relative
    /// path (without dot segments) and query made only of characters that need no escaping,
    /// joined into a string that `URL(string:)` accepts. Nil for anything else; the general
    /// path handles it.
    static func plainURL(plainBase: String, path: String, query: [URLQueryItem]) -> String? {
        guard isPlain(path, allowingSlash: true) else { return nil }
        let tail = path.drop(while: { $0 == "/" })
        guard !tail.isEmpty, !HTTPSyntax.hasDotSegment(tail) else { return nil }
        var string = plainBase
        string += "/"
        string += tail
        for (index, item) in query.enumerated() {
            guard isPlain(item.name, allowingSlash: false), isPlain(item.value ?? "", allowingSlash: false) else { return nil }
            string += index == 0 ? "?" : "&"
            string += item.name
            if let value = item.value {
                string += "="
                string += value
            }
        }
        return string
    }

    /// Whether `text` has only RFC 3986's unreserved characters (and `/`, if allowed).
    private static func isPlain(_ text: String, allowingSlash: Bool) -> Bool {
        text.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
                 UInt8(ascii: "_"), UInt8(ascii: "~"):
                true
            case UInt8(ascii: "/"):
                allowingSlash
            default:
                false
            }
        }
    }

    /// Joins two path pieces with exactly one slash between them.
    static func join(_ base: String, _ path: String) -> String {
        let head = base.hasSuffix("/") ? String(base.dropLast()) : base
        let tail = path.drop(while: { $0 == "/" })
        return tail.isEmpty ? (head.isEmpty ? "/" : head) : "\(head)/\(tail)"
    }
}

extension APIClient {
    /// Sends a resource of this client; `completion` gets its model or error, once, on the
    /// scheduler's callback queue.
    ///
    /// ```swift
    /// let login = api.send(.login(credentials), priority: .critical) { result in … }
    /// api.send(.me, priority: .high, group: screen, after: [login]) { result in … }
    /// ```
    ///
    /// - Parameters:
    ///   - resource: a resource of this client, or an absolute URL of another server (which
    ///     gets none of this client's headers or token).
    ///   - priority: its place in its host's line; a call shared by several callers runs at the
    ///     highest priority among them.
    ///   - group: the screen (or other scope) whose cancellation cancels this caller; none by
    ///     default.
    ///   - dependencies: requests that must succeed first; if one fails or is cancelled, this
    ///     one ends with ``ServiceError/dependencyFailed(cause:dependency:)`` and is never sent.
    ///   - progress: told how much of the body has gone out (an upload's), on the callback
    ///     queue, before `completion`; see ``TransferProgress``.
    ///   - completion: gets the model or the error.
    /// - Returns: the handle to cancel this caller, change its priority, or pass to another
    ///   request's `after:`.
    @discardableResult
    public func send<Model>(
        _ resource: Resource<Model>,
        priority: RequestPriority = .normal,
        group: RequestGroup? = nil,
        after dependencies: [any RequestDependency] = [],
        progress: (@Sendable (TransferProgress) -> Void)? = nil,
        completion: @escaping @Sendable (Result<Model, ServiceError>) -> Void
    ) -> RequestHandle {
        scheduler.send(resolve(resource), priority: priority, group: group, after: dependencies, progress: progress,
                       completion: completion)
    }

    /// Sends a resource of this client and returns its model. Cancelling the calling task
    /// cancels this caller only; a call it shares with others goes on for them. The parameters
    /// are those of ``send(_:priority:group:after:progress:completion:)``.
    ///
    /// ```swift
    /// let friends = try await api.value(for: .friends(of: me), priority: .high)
    /// ```
    ///
    /// - Parameters:
    ///   - resource: as for ``send(_:priority:group:after:progress:completion:)``.
    ///   - priority: its place in its host's line.
    ///   - group: the scope whose cancellation cancels this caller.
    ///   - dependencies: requests that must succeed first.
    ///   - progress: told how much of the body has gone out (an upload's), on the thread that
    ///     learns it, before the value is returned.
    public func value<Model>(
        for resource: Resource<Model>,
        priority: RequestPriority = .normal,
        group: RequestGroup? = nil,
        after dependencies: [any RequestDependency] = [],
        progress: (@Sendable (TransferProgress) -> Void)? = nil
    ) async throws(ServiceError) -> Model {
        try await reply(for: resource, priority: priority, group: group, after: dependencies, progress: progress).value
    }

    /// Sends a resource of this client and returns its model with the response's status,
    /// headers and timing, and whether the call was shared. Otherwise as
    /// ``value(for:priority:group:after:progress:)``.
    ///
    /// ```swift
    /// let created = try await api.reply(for: .create(draft), priority: .critical)
    /// if created.wasShared { … } // a double tap: one POST, two callers
    /// ```
    ///
    /// - Parameters:
    ///   - resource: as for ``send(_:priority:group:after:progress:completion:)``.
    ///   - priority: its place in its host's line.
    ///   - group: the scope whose cancellation cancels this caller.
    ///   - dependencies: requests that must succeed first.
    ///   - progress: told how much of the body has gone out, as for ``value(for:priority:group:after:progress:)``.
    public func reply<Model>(
        for resource: Resource<Model>,
        priority: RequestPriority = .normal,
        group: RequestGroup? = nil,
        after dependencies: [any RequestDependency] = [],
        progress: (@Sendable (TransferProgress) -> Void)? = nil
    ) async throws(ServiceError) -> Reply<Model> {
        try await scheduler.reply(for: resolve(resource), priority: priority, group: group, after: dependencies,
                                  progress: progress)
    }
}
