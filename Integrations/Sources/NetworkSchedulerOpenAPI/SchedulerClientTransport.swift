import Foundation
import HTTPTypes
import NetworkScheduler
import OpenAPIRuntime

/// Sends a generated OpenAPI client's operations through a ``RequestScheduler`` (by way of an
/// ``APIClient``), so that they get what every request of the scheduler gets: priorities and
/// the per-host budget, identical calls sharing one network call, groups, deadlines, retries,
/// host health and the cache. Priority, group and dependencies come from the calling code's
/// scope (``withScheduling(priority:group:after:within:cachePolicy:deduplication:tags:streamsResponse:isolation:operation:)``)
/// or from the transport's defaults for an operation.
///
/// ```swift
/// let scheduler = RequestScheduler { $0.cache = ResponseCache() }
/// let api = APIClient(baseURL: serverURL, scheduler: scheduler, bearerToken: { tokens.token })
/// let client = Client(serverURL: serverURL, transport: SchedulerClientTransport(client: api))
/// let me = try await withScheduling(priority: .high, group: screen) {
///     try await client.getMe().ok.body.json
/// }
/// ```
///
/// Every status reaches the generated client, which reads it as its document says; retries
/// follow the scheduler's policy first. The scheduler's failures reach the app as
/// ``NetworkScheduler/ServiceError``s, inside the runtime's `ClientError` or (from a streamed
/// body) as they are: `ServiceError(unwrapping:)` reads both. The client's default headers and
/// token go only to its own origin, as for its resources. A body of known length up to
/// `bufferedUploadLimit` is sent from memory, a larger or unknown one from a temporary file
/// it is written to as it is read. An answer is read whole (so that identical calls can share
/// it, and the cache keep it) unless it streams
/// (``SchedulingOptions/streamsResponse``): then its body reaches the client as it arrives.
/// Each call is tagged `openapi:` and its operation's ID, so that
/// `scheduler.cancel { $0.tags.contains("openapi:getFeed") }` cancels an operation's calls.
public struct SchedulerClientTransport: ClientTransport {
    /// The client whose scheduler runs the calls, and whose headers and token they carry on
    /// its origin.
    public let client: APIClient
    /// The most bytes of a request body of known length sent from memory.
    public let bufferedUploadLimit: Int
    private let defaults: @Sendable (_ operationID: String) -> SchedulingOptions

    /// A transport over `client`.
    ///
    /// - Parameters:
    ///   - client: the client whose scheduler runs the calls.
    ///   - bufferedUploadLimit: the most bytes of a body of known length sent from memory.
    ///   - defaults: the options of each operation, by its ID, for what no scope sets.
    public init(
        client: APIClient,
        bufferedUploadLimit: Int = 1 << 20,
        defaults: @escaping @Sendable (_ operationID: String) -> SchedulingOptions = { _ in SchedulingOptions() }
    ) {
        self.client = client
        self.bufferedUploadLimit = max(0, bufferedUploadLimit)
        self.defaults = defaults
    }

    /// Sends one operation's request and returns its answer.
    public func send(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String)
        async throws -> (HTTPResponse, HTTPBody?) {
        var options = defaults(operationID).overridden(by: SchedulingScope.current)
        options.tags.insert("openapi:\(operationID)")
        let url = try HTTPConversion.url(of: request, baseURL: baseURL)
        var headers = HTTPConversion.headers(of: request.headerFields)
        let contentType = headers[HTTPField.Name.contentType.rawName] ?? "application/octet-stream"
        headers[HTTPField.Name.contentType.rawName] = nil
        let spooled = try await body.asyncMap { try await SpooledBody($0, contentType: contentType, limit: bufferedUploadLimit) }
        if options.streamsResponse ?? Self.asksForAStream(request) {
            return try await stream(request, url: url, headers: headers, body: spooled?.body, options: options)
        }
        var resource = Resource<Data>(HTTPConversion.verb(of: request), path: url, headers: headers, body: spooled?.body,
                                      acceptableStatusCodes: 100..<1000, deduplication: options.deduplication)
        resource.cachePolicy = options.cachePolicy
        resource.tags = options.tags
        if let deadline = options.deadline { resource = resource.within(deadline) }
        let reply = try await client.reply(for: resource, priority: options.priority, group: options.group,
                                           after: options.dependencies)
        let response = try HTTPConversion.response(reply.head)
        return (response, request.method == .head ? nil : HTTPBody(reply.value))
    }

    /// Sends the request as a stream, and returns its head once it arrived, with a body that
    /// yields its chunks as they come.
    private func stream(_ request: HTTPRequest, url: String, headers: HeaderFields, body: EndpointBody?,
                        options: SchedulingOptions) async throws -> (HTTPResponse, HTTPBody?) {
        var resource = StreamResource.chunks(url, method: HTTPConversion.verb(of: request), headers: headers, body: body)
        resource.request.tags = options.tags
        if let deadline = options.deadline { resource.request = resource.request.within(deadline) }
        let stream = client.stream(resource, priority: options.priority, group: options.group, after: options.dependencies)
        let head: ResponseHead
        do {
            head = try await stream.head()
        } catch {
            // Not 2xx: read whole by the scheduler, and the client's to read like any other.
            guard case .server(let answer) = error else { throw error }
            return (try HTTPConversion.response(answer), HTTPBody(answer.body))
        }
        let length = head.value(forHTTPHeaderField: "Content-Length").flatMap(Int64.init).map(HTTPBody.Length.known) ?? .unknown
        let chunks = stream.map { ArraySlice($0) }
        return (try HTTPConversion.response(head), HTTPBody(chunks, length: length, iterationBehavior: .single))
    }

    /// Whether the request asks only for a kind of answer read as it arrives: bytes, events
    /// or JSON lines.
    static func asksForAStream(_ request: HTTPRequest) -> Bool {
        guard let accept = request.headerFields[.accept] else { return false }
        let types = accept.split(separator: ",").map {
            $0.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        }
        let streamed: Set<String> = ["application/octet-stream", "text/event-stream", "application/jsonl",
                                     "application/x-ndjson", "application/json-seq"]
        return !types.isEmpty && types.allSatisfy(streamed.contains)
    }
}

extension Optional {
    /// The value mapped by `transform`, awaited; nil for nil.
    fileprivate func asyncMap<Mapped>(_ transform: (Wrapped) async throws -> Mapped) async throws -> Mapped? {
        guard let value = self else { return nil }
        return try await transform(value)
    }
}
