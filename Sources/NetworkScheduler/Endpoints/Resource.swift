import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One endpoint of an API, and the model its response becomes.
///
/// A resource is a value: add endpoints as static members, never by editing a central switch.
///
/// ```swift
/// extension Resource where Model == [User] {
///     static func friends(of user: User.ID) -> Self {
///         Resource(path: "users/\(user)/friends", query: [URLQueryItem(name: "limit", value: "50")])
///     }
/// }
/// extension Resource where Model == Post {
///     static func create(_ draft: PostDraft) -> Self {
///         Resource(.post, path: "posts", body: .json(draft))
///     }
/// }
/// ```
public struct Resource<Model: Sendable>: Sendable {
    /// The HTTP method.
    public var method: HTTPVerb
    /// The path below the client's base URL (`users/42`), or an absolute URL string for
    /// requests outside the API (an image on a CDN).
    public var path: String
    /// Query items appended to the URL.
    public var query: [URLQueryItem]
    /// Headers of this endpoint; they override the client's.
    public var headers: HeaderFields
    /// The body, for POST, PUT and PATCH.
    public var body: EndpointBody?
    /// The statuses that count as success; any other becomes ``ServiceError/server(_:)``.
    public var acceptableStatusCodes: Range<Int>
    /// The most seconds an attempt may take on the wire, from its start to its last byte,
    /// whatever the server sends meanwhile; nil uses the client's. The scheduler ends an attempt
    /// that outlives it with ``ServiceError/timedOut`` and cancels its task.
    public var timeout: TimeInterval?
    /// Whether identical requests in flight share one network call.
    public var deduplication: Deduplication
    /// How the response becomes the model.
    public var decoding: ResponseDecoding<Model>
    /// When to try again; nil uses the scheduler's policy. See ``retrying(_:)``.
    public var retryPolicy: RetryPolicy?
    /// Whether to send an `Idempotency-Key`; nil uses the client's choice. See
    /// ``withIdempotencyKey(_:)``.
    public var sendsIdempotencyKey: Bool?
    /// Which redirects to follow; nil uses the client's ``APIClient/redirectPolicy``.
    public var redirectPolicy: TransportPolicy.Redirects?
    /// The most bytes of body to read; nil uses the scheduler's
    /// ``RequestScheduler/Configuration-swift.struct/maximumResponseSize``. Set it to download
    /// something larger.
    public var maximumResponseSize: Int?
    /// Labels of your own ("sync", "analytics", a screen's name) that
    /// ``RequestScheduler/cancel(where:)`` can select requests by. See ``tagged(_:)``.
    public var tags: Set<String> = []
    /// The serial lane it runs in, one at a time with the other requests of that lane; nil
    /// runs it as its priority and its host's budget allow. See ``inLane(_:onFailure:)``.
    public var lane: Lane?
    /// The most seconds it may take in all, from when it is sent to its outcome: waiting for
    /// its dependencies, in its lane and its host's line, every attempt and every backoff. Past
    /// it the caller ends with ``ServiceError/deadlineExceeded``, at that moment; nil waits as
    /// long as it takes. See ``within(_:)``.
    public var deadline: TimeInterval?
    /// How it uses the scheduler's cache (``RequestScheduler/Configuration-swift.struct/cache``):
    /// HTTP's rules unless you choose otherwise. See ``caching(_:)``.
    public var cachePolicy: CachePolicy = .useCache
    /// Where a download's body is saved (``download(_:query:headers:to:maximumSize:timeout:)``).
    var downloadDestination: URL?

    /// A resource with an explicit way to read its response.
    ///
    /// - Parameters:
    ///   - method: the HTTP method; GET by default.
    ///   - path: the path below the client's base URL (`users/42`), or an absolute URL on another server.
    ///   - query: query items appended to the URL.
    ///   - headers: headers of this endpoint; they override the client's.
    ///   - body: the body, for POST, PUT, PATCH and DELETE.
    ///   - acceptableStatusCodes: the statuses that count as success; any other ends the caller with
    ///     ``ServiceError/server(_:)``.
    ///   - timeout: the most seconds an attempt may take on the wire; nil uses the client's.
    ///   - deduplication: whether identical requests in flight share one network call.
    ///   - decoding: how the response becomes the model.
    public init(
        _ method: HTTPVerb = .get,
        path: String,
        query: [URLQueryItem] = [],
        headers: HeaderFields = [:],
        body: EndpointBody? = nil,
        acceptableStatusCodes: Range<Int> = 200..<300,
        timeout: TimeInterval? = nil,
        deduplication: Deduplication = .automatic,
        decoding: ResponseDecoding<Model>
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
        self.acceptableStatusCodes = acceptableStatusCodes
        self.timeout = timeout
        self.deduplication = deduplication
        self.decoding = decoding
    }

    /// The same request in every respect (its tags, lane, deadline, policies and limits
    /// included), read another way.
    ///
    /// - Parameter decoding: how the response becomes the other model.
    package func reading<Other>(as decoding: ResponseDecoding<Other>) -> Resource<Other> {
        var other = Resource<Other>(method, path: path, query: query, headers: headers, body: body,
                                    acceptableStatusCodes: acceptableStatusCodes, timeout: timeout,
                                    deduplication: deduplication, decoding: decoding)
        other.retryPolicy = retryPolicy
        other.sendsIdempotencyKey = sendsIdempotencyKey
        other.redirectPolicy = redirectPolicy
        other.maximumResponseSize = maximumResponseSize
        other.tags = tags
        other.lane = lane
        other.deadline = deadline
        other.cachePolicy = cachePolicy
        other.downloadDestination = downloadDestination
        return other
    }

    /// A resource for a `URLRequest` you built yourself: its method, URL, headers, body and
    /// timeout. As with any resource, the client adds its own headers and token only when the
    /// URL is on the client's origin, and checks every part before it reaches the wire.
    ///
    /// ```swift
    /// let image = try await api.value(for: Resource(URLRequest(url: avatarURL), decoding: .data))
    /// ```
    ///
    /// - Parameters:
    ///   - urlRequest: the request to send. A body in `httpBodyStream` is not read: such a
    ///     request ends its caller with ``ServiceError/invalidRequest(reason:)``.
    ///   - decoding: how the response becomes the model.
    public init(_ urlRequest: URLRequest, decoding: ResponseDecoding<Model>) {
        let headers = HeaderFields(urlRequest.allHTTPHeaderFields ?? [:])
        let contentType = headers["Content-Type"]
        let body: EndpointBody? = if let data = urlRequest.httpBody {
            .data(data, contentType: contentType ?? "application/octet-stream")
        } else if urlRequest.httpBodyStream != nil {
            EndpointBody(contentType: contentType ?? "application/octet-stream", encode: { throw URLRequestBodyStreamError() })
        } else {
            nil
        }
        self.init(HTTPVerb(rawValue: urlRequest.httpMethod ?? "GET"), path: urlRequest.url?.absoluteString ?? "",
                  headers: headers, body: body, timeout: urlRequest.timeoutInterval, decoding: decoding)
    }
}

/// Why a `URLRequest` whose body is a stream cannot be a resource's.
private struct URLRequestBodyStreamError: Error, CustomStringConvertible {
    var description: String { "a URLRequest's httpBodyStream is not read; give its body as httpBody" }
}

extension Resource {
    /// This resource with `tags` added to its own.
    ///
    /// ```swift
    /// let upload = Resource<Receipt>(.post, path: "sync", body: .json(changes)).tagged("sync")
    /// scheduler.cancel { $0.tags.contains("sync") } // the user turned sync off
    /// ```
    ///
    /// - Parameter tags: the labels to add.
    public func tagged(_ tags: String...) -> Self {
        var copy = self
        copy.tags.formUnion(tags)
        return copy
    }

    /// This resource in the serial lane `name`: it starts only once every request sent before
    /// it in that lane has ended. `onFailure` says whether its failure cancels the requests
    /// waiting behind it.
    ///
    /// ```swift
    /// for change in offlineChanges { api.send(.apply(change).inLane("replay", onFailure: .cancelTheRest)) }
    /// ```
    ///
    /// - Parameters:
    ///   - name: the lane's name; resources with the same name share it.
    ///   - onFailure: whether a failure runs the requests behind it or cancels them.
    public func inLane(_ name: String, onFailure: Lane.FailurePolicy = .runTheRest) -> Self {
        var resource = self
        resource.lane = Lane(name, onFailure: onFailure)
        return resource
    }

    /// This resource with a deadline: it ends with ``ServiceError/deadlineExceeded`` if it has
    /// not ended `seconds` after it is sent, whether it still waits or is on the wire (its
    /// attempt then goes on only if identical requests still want it).
    ///
    /// ```swift
    /// let suggestions = try await api.value(for: .suggestions(for: query).within(0.8))
    /// ```
    ///
    /// - Parameter seconds: the most seconds from its send to its outcome.
    public func within(_ seconds: TimeInterval) -> Self {
        var resource = self
        resource.deadline = seconds
        return resource
    }

    /// This resource with its own retry policy.
    ///
    /// - Parameter policy: its retry policy, instead of the scheduler's.
    public func retrying(_ policy: RetryPolicy) -> Self {
        var resource = self
        resource.retryPolicy = policy
        return resource
    }

    /// This resource with its own redirect policy.
    ///
    /// - Parameter policy: its redirect policy, instead of the client's.
    public func redirecting(_ policy: TransportPolicy.Redirects) -> Self {
        var resource = self
        resource.redirectPolicy = policy
        return resource
    }

    /// This resource with its own response size limit, in bytes.
    ///
    /// - Parameter bytes: the most bytes of body to read, after decompression.
    public func limitingResponses(to bytes: Int) -> Self {
        var resource = self
        resource.maximumResponseSize = bytes
        return resource
    }

    /// This resource with its own way of using the scheduler's cache: see ``CachePolicy``.
    ///
    /// ```swift
    /// api.send(.feed(page: 1).caching(.revalidate)) { … } // pull to refresh
    /// ```
    ///
    /// - Parameter policy: how it reads and stores answers.
    public func caching(_ policy: CachePolicy) -> Self {
        var resource = self
        resource.cachePolicy = policy
        return resource
    }

    /// This resource with (or without) an `Idempotency-Key`: one fresh key per logical submit,
    /// reused by its retries and shared by identical requests that join it. The server can
    /// then tell a retry from a second submit, so keyed POSTs are retried like PUTs.
    ///
    /// - Parameter sends: whether to send a key.
    public func withIdempotencyKey(_ sends: Bool = true) -> Self {
        var resource = self
        resource.sendsIdempotencyKey = sends
        return resource
    }
}

extension Resource where Model: Decodable {
    /// A resource whose JSON response decodes into `Model`.
    ///
    /// - Parameters:
    ///   - method: the HTTP method; GET by default.
    ///   - path: the path below the client's base URL (`users/42`), or an absolute URL on another server.
    ///   - query: query items appended to the URL.
    ///   - headers: headers of this endpoint; they override the client's.
    ///   - body: the body, for POST, PUT, PATCH and DELETE.
    ///   - acceptableStatusCodes: the statuses that count as success; any other ends the caller with
    ///     ``ServiceError/server(_:)``.
    ///   - timeout: the most seconds an attempt may take on the wire; nil uses the client's.
    ///   - deduplication: whether identical requests in flight share one network call.
    ///   - decoder: the decoder of the JSON body; a shared default one unless you pass another.
    public init(
        _ method: HTTPVerb = .get,
        path: String,
        query: [URLQueryItem] = [],
        headers: HeaderFields = [:],
        body: EndpointBody? = nil,
        acceptableStatusCodes: Range<Int> = 200..<300,
        timeout: TimeInterval? = nil,
        deduplication: Deduplication = .automatic,
        decoder: JSONDecoder = .standard
    ) {
        self.init(method, path: path, query: query, headers: headers, body: body,
                  acceptableStatusCodes: acceptableStatusCodes, timeout: timeout,
                  deduplication: deduplication, decoding: .json(decoder))
    }
}

extension Resource where Model == Void {
    /// A resource whose response body is ignored.
    ///
    /// - Parameters:
    ///   - method: the HTTP method; GET by default.
    ///   - path: the path below the client's base URL (`users/42`), or an absolute URL on another server.
    ///   - query: query items appended to the URL.
    ///   - headers: headers of this endpoint; they override the client's.
    ///   - body: the body, for POST, PUT, PATCH and DELETE.
    ///   - acceptableStatusCodes: the statuses that count as success; any other ends the caller with
    ///     ``ServiceError/server(_:)``.
    ///   - timeout: the most seconds an attempt may take on the wire; nil uses the client's.
    ///   - deduplication: whether identical requests in flight share one network call.
    public init(
        _ method: HTTPVerb = .get,
        path: String,
        query: [URLQueryItem] = [],
        headers: HeaderFields = [:],
        body: EndpointBody? = nil,
        acceptableStatusCodes: Range<Int> = 200..<300,
        timeout: TimeInterval? = nil,
        deduplication: Deduplication = .automatic
    ) {
        self.init(method, path: path, query: query, headers: headers, body: body,
                  acceptableStatusCodes: acceptableStatusCodes, timeout: timeout,
                  deduplication: deduplication, decoding: .empty)
    }
}

extension Resource where Model == Data {
    /// A resource whose response body is handed back as it arrived: an image, a file, anything not JSON.
    ///
    /// - Parameters:
    ///   - method: the HTTP method; GET by default.
    ///   - path: the path below the client's base URL (`users/42`), or an absolute URL on another server.
    ///   - query: query items appended to the URL.
    ///   - headers: headers of this endpoint; they override the client's.
    ///   - body: the body, for POST, PUT, PATCH and DELETE.
    ///   - acceptableStatusCodes: the statuses that count as success; any other ends the caller with
    ///     ``ServiceError/server(_:)``.
    ///   - timeout: the most seconds an attempt may take on the wire; nil uses the client's.
    ///   - deduplication: whether identical requests in flight share one network call.
    public init(
        _ method: HTTPVerb = .get,
        path: String,
        query: [URLQueryItem] = [],
        headers: HeaderFields = [:],
        body: EndpointBody? = nil,
        acceptableStatusCodes: Range<Int> = 200..<300,
        timeout: TimeInterval? = nil,
        deduplication: Deduplication = .automatic
    ) {
        self.init(method, path: path, query: query, headers: headers, body: body,
                  acceptableStatusCodes: acceptableStatusCodes, timeout: timeout,
                  deduplication: deduplication, decoding: .data)
    }
}

extension Resource where Model == String {
    /// A resource whose response body is read as text, in the charset its `Content-Type` names (UTF-8 if none).
    ///
    /// - Parameters:
    ///   - method: the HTTP method; GET by default.
    ///   - path: the path below the client's base URL (`users/42`), or an absolute URL on another server.
    ///   - query: query items appended to the URL.
    ///   - headers: headers of this endpoint; they override the client's.
    ///   - body: the body, for POST, PUT, PATCH and DELETE.
    ///   - acceptableStatusCodes: the statuses that count as success; any other ends the caller with
    ///     ``ServiceError/server(_:)``.
    ///   - timeout: the most seconds an attempt may take on the wire; nil uses the client's.
    ///   - deduplication: whether identical requests in flight share one network call.
    public init(
        _ method: HTTPVerb = .get,
        path: String,
        query: [URLQueryItem] = [],
        headers: HeaderFields = [:],
        body: EndpointBody? = nil,
        acceptableStatusCodes: Range<Int> = 200..<300,
        timeout: TimeInterval? = nil,
        deduplication: Deduplication = .automatic
    ) {
        self.init(method, path: path, query: query, headers: headers, body: body,
                  acceptableStatusCodes: acceptableStatusCodes, timeout: timeout,
                  deduplication: deduplication, decoding: .text)
    }
}

extension Resource where Model == URL {
    /// A download: its body is written to a file as it arrives, never held in memory, and moved
    /// to `destination` (replacing what was there) once whole; the model is `destination`.
    ///
    /// An attempt that fails after the server named the body's version (a strong `ETag`, or
    /// `Last-Modified`) leaves `<destination>.partial`, which the next attempt, or a later
    /// download to the same destination, resumes with `Range` and `If-Range`. See <doc:Downloads>.
    ///
    /// ```swift
    /// let export = Resource.download("exports/2026.zip", to: documents.appendingPathComponent("2026.zip"),
    ///                                 maximumSize: 2 << 30)
    /// let file = try await api.value(for: export, priority: .low, progress: { bar.value = $0.fractionReceived ?? 0 })
    /// ```
    ///
    /// - Parameters:
    ///   - path: the path below the client's base URL, or an absolute URL on another server.
    ///   - query: query items appended to the URL.
    ///   - headers: headers of this endpoint; they override the client's.
    ///   - destination: the file to write; its folder must exist.
    ///   - maximumSize: the most bytes to write to the file; nil for no limit (the scheduler's
    ///     response size limit, meant for bodies in memory, applies only to an error's body).
    ///   - timeout: the most seconds an attempt may go without receiving a byte; nil uses the client's.
    public static func download(
        _ path: String,
        query: [URLQueryItem] = [],
        headers: HeaderFields = [:],
        to destination: URL,
        maximumSize: Int? = nil,
        timeout: TimeInterval? = nil
    ) -> Self {
        var resource = Resource(.get, path: path, query: query, headers: headers, timeout: timeout,
                                decoding: ResponseDecoding(decode: { _, _ in destination }, identity: nil))
        resource.downloadDestination = destination
        resource.maximumResponseSize = maximumSize
        return resource
    }
}
