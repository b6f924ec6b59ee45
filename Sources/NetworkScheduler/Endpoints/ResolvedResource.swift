import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A resource bound to its client (base URL, headers, token), ready for the scheduler: how to
/// build its request and how to read the answer.
///
/// Clients make these from resources (`APIClient.resolve(_:)`). The request is built when
/// it is about to be scheduled, not when it is created, so a request that waits for a login
/// (`after:`) is sent with the token that login stored.
struct ResolvedResource<Model: Sendable>: Sendable {
    /// What the scheduler needs whatever the model: how to build, share and retry the request.
    let submission: Submission
    /// How its caller reads the answer, which is all a caller keeps once its request is sent.
    let reading: ResponseReading<Model>

    init(submission: Submission, decoding: ResponseDecoding<Model>) {
        self.submission = submission
        reading = ResponseReading(acceptableStatusCodes: submission.acceptableStatusCodes, decoding: decoding)
    }
}

/// How a caller reads its call's answer: the statuses it accepts (its submission's, which the
/// machine read the attempt by, and which every caller of the call shares) and the model it
/// decodes.
struct ResponseReading<Model: Sendable>: Sendable {
    let acceptableStatusCodes: Range<Int>
    let decoding: ResponseDecoding<Model>

    /// Reads a response: checks the status, then decodes with this request's own model type.
    /// `idempotencyKey` is the key the call carried, which gives 409 and 422 their meaning.
    /// `decodes` holds the decodes other callers of the same call already made.
    func model(from payload: TransportResponse, idempotencyKey: String?, sharing decodes: SharedDecodes?) throws(ServiceError) -> Model {
        let head = payload.head
        guard acceptableStatusCodes.contains(head.statusCode) else {
            let error = ServiceError.ServerResponse(statusCode: head.statusCode, body: payload.data, headers: head.headerFields)
            switch (head.statusCode, idempotencyKey) {
            case (409, .some): throw .idempotencyKeyInUse(error)
            case (422, .some): throw .idempotencyKeyMismatch(error)
            default: throw .server(error)
            }
        }
        return try decoding.model(from: payload.data, head: head, sharing: decodes)
    }
}

/// The model-independent half of a request: how to prepare, share and retry it. A class,
/// because a caller's handle, its delivery and its network call all keep it.
final class Submission: Sendable, Equatable {
    /// Where the request comes from.
    enum Source: Sendable {
        /// A client's resource, built when it is about to be scheduled.
        case recipe(EndpointRecipe)
        /// A `URLRequest` the caller built, sent as it is.
        case urlRequest(URLRequest)
    }

    let source: Source
    let deduplication: Deduplication
    /// The statuses that succeed: the one rule by which the attempt is read for the machine
    /// and the answer for its callers.
    let acceptableStatusCodes: Range<Int>
    /// The resource's own policy; nil uses the scheduler's.
    let retryPolicy: RetryPolicy?
    /// Whether each call gets a fresh `Idempotency-Key`, shared by its joiners and retries.
    let sendsIdempotencyKey: Bool
    /// Refreshes the token when the server answers 401.
    let authenticator: TokenAuthenticator?
    /// Which redirects it follows.
    let redirectPolicy: TransportPolicy.Redirects
    /// Its own response size limit; nil uses the scheduler's.
    let maximumResponseSize: Int?
    /// The headers its client adds for its own server, dropped on a redirect elsewhere.
    let originBoundHeaders: [String]
    /// Its resource's tags.
    let tags: Set<String>
    /// How it uses its scheduler's cache.
    let cachePolicy: CachePolicy
    /// Its lane, deadline and adapter, which few requests have: apart, so that the others do
    /// not carry their bytes (a submission is made per request).
    private let steering: Steering?

    private final class Steering: Sendable {
        let lane: Lane?
        let deadline: TimeInterval?
        let adapter: RequestAdapter?
        let downloadDestination: URL?
        let stream: (any StreamIntake)?

        init(lane: Lane?, deadline: TimeInterval?, adapter: RequestAdapter?, downloadDestination: URL?,
             stream: (any StreamIntake)?) {
            self.lane = lane
            self.deadline = deadline
            self.adapter = adapter
            self.downloadDestination = downloadDestination
            self.stream = stream
        }
    }

    /// The serial lane it runs in, if any.
    var lane: Lane? { steering?.lane }
    /// The most seconds from its send to its outcome, if it has a deadline.
    var deadline: TimeInterval? { steering?.deadline }
    /// What changes its request as each attempt starts, if anything.
    var adapter: RequestAdapter? { steering?.adapter }
    /// Where its body is saved, if it is a download.
    var downloadDestination: URL? { steering?.downloadDestination }
    /// Where its body goes, if it is a stream's.
    var stream: (any StreamIntake)? { steering?.stream }
    /// Whether it runs in its host's line for streams (``SchedulerMachine/streamBudget``).
    var opensStream: Bool { steering?.stream != nil }

    init(
        _ source: Source,
        deduplication: Deduplication,
        acceptableStatusCodes: Range<Int> = 200..<300,
        retryPolicy: RetryPolicy? = nil,
        sendsIdempotencyKey: Bool = false,
        authenticator: TokenAuthenticator? = nil,
        redirectPolicy: TransportPolicy.Redirects = .follow,
        maximumResponseSize: Int? = nil,
        originBoundHeaders: [String] = [],
        tags: Set<String> = [],
        lane: Lane? = nil,
        deadline: TimeInterval? = nil,
        adapter: RequestAdapter? = nil,
        downloadDestination: URL? = nil,
        stream: (any StreamIntake)? = nil,
        cachePolicy: CachePolicy = .useCache
    ) {
        self.source = source
        self.deduplication = deduplication
        self.acceptableStatusCodes = acceptableStatusCodes
        self.retryPolicy = retryPolicy
        self.sendsIdempotencyKey = sendsIdempotencyKey
        self.authenticator = authenticator
        self.redirectPolicy = redirectPolicy
        self.maximumResponseSize = maximumResponseSize
        self.originBoundHeaders = originBoundHeaders
        self.tags = tags
        // A download or a stream goes to its file or its reader, never to the cache.
        self.cachePolicy = downloadDestination == nil && stream == nil ? cachePolicy : .bypass
        steering = lane == nil && deadline == nil && adapter == nil && downloadDestination == nil && stream == nil
            ? nil : Steering(lane: lane, deadline: deadline, adapter: adapter, downloadDestination: downloadDestination,
                             stream: stream)
    }

    /// The method and URL it is sent with, without building the whole request.
    var target: (method: String, url: URL?) { source.target }

    /// The same submission with another cache policy: for a revalidation in the background.
    func caching(_ policy: CachePolicy) -> Submission {
        Submission(source, deduplication: deduplication, acceptableStatusCodes: acceptableStatusCodes, retryPolicy: retryPolicy,
                   sendsIdempotencyKey: sendsIdempotencyKey,
                   authenticator: authenticator, redirectPolicy: redirectPolicy, maximumResponseSize: maximumResponseSize,
                   originBoundHeaders: originBoundHeaders, tags: tags, lane: lane, deadline: deadline, adapter: adapter,
                   downloadDestination: downloadDestination, stream: stream, cachePolicy: policy)
    }

    /// What its transport must enforce, with `maximumResponseSize` unless it has its own.
    func transportPolicy(maximumResponseSize defaultLimit: Int) -> TransportPolicy {
        TransportPolicy(redirects: redirectPolicy, maximumResponseSize: maximumResponseSize ?? defaultLimit,
                        originBoundHeaders: originBoundHeaders)
    }

    /// What gives its caller's context fields, if its client has it.
    var contextPropagation: (any ContextPropagation)? {
        if case .recipe(let recipe) = source { return recipe.contextPropagation }
        return nil
    }

    /// The request as the scheduler keeps it, with the bearer token as it is now, and its
    /// caller's `context` fields (on its client's origin).
    /// An adapter's request carries the identity the adapter states now, or `identity` when
    /// given: a request built again for its call (after a token refresh) is for the same user.
    func prepare(context: HeaderFields = [:],
                 identity: RequestAdapter.StatedIdentity? = nil) throws(ServiceError) -> PreparedRequest {
        let request: PreparedRequest = switch source {
        case .recipe(let recipe): try recipe.prepare(context: context)
        case .urlRequest(let request): try .checked(request)
        }
        return adapter.map { request.adapted(by: $0, for: identity) } ?? request
    }
}

extension Submission.Source {
    /// The method and URL it is sent with, without building the whole request.
    var target: (method: String, url: URL?) {
        switch self {
        case .recipe(let recipe): recipe.target
        case .urlRequest(let request): (request.httpMethod ?? "GET", request.url)
        }
    }

    /// The host key of its budget (scheme, host and port); nil without an absolute URL.
    var host: String? {
        switch self {
        case .recipe(let recipe): recipe.host
        case .urlRequest(let request): request.url?.hostKey
        }
    }

    /// The same source without a resource's body, which names the request as well but holds
    /// no file. A `URLRequest`'s body is bytes the caller holds anyway.
    var withoutBody: Submission.Source {
        switch self {
        case .recipe(let recipe): .recipe(recipe.withoutBody)
        case .urlRequest: self
        }
    }
}

extension Submission {
    /// The same submission: one is made per send, and shared by its call's attempts.
    static func == (lhs: Submission, rhs: Submission) -> Bool { lhs === rhs }
}
