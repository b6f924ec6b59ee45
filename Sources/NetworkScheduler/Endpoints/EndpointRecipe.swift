import Foundation

/// What every request of one ``APIClient`` starts from, shared by all its requests: the client
/// makes it again only when one of these settings changes.
final class ClientDefaults: Sendable {
    let baseURL: URL
    /// The host key of `baseURL`, made once: the same for every relative path.
    let baseHost: String?
    /// `baseURL` as relative paths are joined to it without `URLComponents`, if it allows.
    let plainBase: String?
    /// The default headers, with case-insensitive names once and for all.
    let headers: HeaderFields
    let bearerToken: @Sendable () -> String?
    let timeout: TimeInterval
    /// Gives each caller's context fields, if the client has it.
    let contextPropagation: (any ContextPropagation)?
    /// The names of the default headers and the context fields, which a redirect to another
    /// origin drops.
    let originBoundHeaders: [String]
    /// Why every request of the client fails, if its base URL or default headers are not
    /// valid: checked once, here, not on every request.
    let invalid: ServiceError?

    init(baseURL: URL, headers: HeaderFields, bearerToken: @escaping @Sendable () -> String?, timeout: TimeInterval,
         contextPropagation: (any ContextPropagation)? = nil) {
        self.baseURL = baseURL
        baseHost = baseURL.hostKey
        plainBase = APIClient.plainBase(of: baseURL)
        self.headers = headers
        self.contextPropagation = contextPropagation
        originBoundHeaders = headers.names + (contextPropagation?.fieldNames ?? [])
        self.bearerToken = bearerToken
        self.timeout = timeout
        do throws(ServiceError) {
            try HTTPSyntax.checkScheme(baseURL.scheme)
            try HTTPSyntax.checkHeaders(headers)
            invalid = nil
        } catch {
            invalid = error
        }
    }
}

/// How to prepare one request of a client: the client's shared defaults and the resource's
/// endpoint, and nothing else of either. A request keeps its recipe while it waits (and for a
/// replay after a token refresh), so it holds ~100 bytes rather than a whole client and resource.
struct EndpointRecipe: Sendable {
    private let defaults: ClientDefaults
    private let method: HTTPVerb
    private let path: String
    private let query: [URLQueryItem]
    private let headers: HeaderFields
    private var body: EndpointBody?
    private let timeout: TimeInterval?
    /// Its absolute URL and the host key of its budget, made once: its events, its handle's
    /// `url`, its line and every build of it (a replay's too) read this.
    private let location: Result<Location, ServiceError>

    private struct Location {
        let url: String
        let host: String
    }

    init<Model>(defaults: ClientDefaults, resource: Resource<Model>) {
        self.defaults = defaults
        method = resource.method
        path = resource.path
        query = resource.query
        headers = resource.headers
        body = resource.body
        timeout = resource.timeout
        location = Result { () throws(ServiceError) in try Self.locate(resource.path, resource.query, in: defaults) }
    }

    /// Gives each caller's context fields, if its client has it.
    var contextPropagation: (any ContextPropagation)? { defaults.contextPropagation }

    /// The request as its parts, which the scheduler turns into a `URLRequest` only when it
    /// starts; the bearer token is read now. The client's token, default headers and the
    /// caller's `context` fields go only to its own origin (a resource may name an absolute
    /// URL elsewhere, a CDN's); what the caller, the client or the token provider gave is
    /// checked before it can reach the wire.
    func prepare(context: HeaderFields = [:]) throws(ServiceError) -> PreparedRequest {
        if let invalid = defaults.invalid { throw invalid }
        try HTTPSyntax.checkMethod(method.rawValue)
        let location = try location.get()
        let isOwnOrigin = location.host == defaults.baseHost
        // Header names are case-insensitive: a later layer replaces an earlier one whatever
        // its spelling. The defaults are shared, not copied, unless a layer adds to them.
        var headers = isOwnOrigin ? defaults.headers : HeaderFields()
        if isOwnOrigin, let token = defaults.bearerToken() {
            guard HTTPSyntax.isFieldValue(token) else {
                throw .invalidRequest(reason: "the bearer token has a control character, such as a line break")
            }
            headers["Authorization"] = "Bearer \(token)"
        }
        if isOwnOrigin, !context.isEmpty {
            let fields = HeaderFields(context)
            try HTTPSyntax.checkHeaders(fields)
            headers.merge(fields)
        }
        var requestBody: RequestBody?
        if let body {
            guard method.allowsBody else {
                throw .invalidRequest(reason: "a \(method.rawValue) request cannot carry a body")
            }
            requestBody = try body.makeBody()
            guard HTTPSyntax.isFieldValue(body.contentType) else {
                throw .invalidRequest(reason: "the body's content type has a control character, such as a line break")
            }
            headers["Content-Type"] = body.contentType
        }
        if !self.headers.isEmpty {
            try HTTPSyntax.checkHeaders(self.headers)
            headers.merge(self.headers)
        }
        let parts = PreparedRequest.Parts(method: method.rawValue, url: location.url, headers: headers, body: requestBody,
                                          timeout: timeout ?? defaults.timeout)
        return PreparedRequest(parts, host: location.host)
    }

    /// The same recipe without its body: what names the request once it has ended.
    var withoutBody: EndpointRecipe {
        var recipe = self
        recipe.body = nil
        return recipe
    }

    /// Its method and absolute URL (nil if it has none), without the rest of the request.
    var target: (method: String, url: URL?) {
        (method.rawValue, (try? location.get()).flatMap { URL(string: $0.url) })
    }

    /// The host key of its budget; nil if it has no absolute URL.
    var host: String? { try? location.get().host }

    /// The absolute URL of `path` and `query` on the client's base URL, and its host key.
    private static func locate(_ path: String, _ query: [URLQueryItem], in defaults: ClientDefaults) throws(ServiceError) -> Location {
        if let baseHost = defaults.baseHost, let plainBase = defaults.plainBase,
           let url = APIClient.plainURL(plainBase: plainBase, path: path, query: query) {
            return Location(url: url, host: baseHost)
        }
        let url = try APIClient.componentsURL(base: defaults.baseURL, path: path, query: query)
        guard let host = url.hostKey else {
            throw .invalidRequest(reason: "\(url.absoluteString) has no host")
        }
        return Location(url: url.absoluteString, host: host)
    }
}
