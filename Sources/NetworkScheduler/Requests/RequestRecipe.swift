import Foundation

/// How to prepare one request of a client: the client's defaults and the resource's endpoint,
/// and nothing else of either. A request keeps its recipe while it waits (and for a replay
/// after a token refresh), so it holds ~150 bytes rather than a whole client and resource.
struct RequestRecipe: Sendable {
    private let baseURL: URL
    private let baseHost: String?
    private let defaultHeaders: HeaderFields
    private let bearerToken: @Sendable () -> String?
    private let defaultTimeout: TimeInterval
    private let method: HTTPMethod
    private let path: String
    private let query: [URLQueryItem]
    private let headers: [String: String]
    private let body: RequestBody?
    private let timeout: TimeInterval?

    init<Model>(client: APIClient, resource: Resource<Model>) {
        baseURL = client.baseURL
        baseHost = client.baseHost
        defaultHeaders = client.defaultHeaderFields
        bearerToken = client.bearerToken
        defaultTimeout = client.timeout
        method = resource.method
        path = resource.path
        query = resource.query
        headers = resource.headers
        body = resource.body
        timeout = resource.timeout
    }

    /// The request as its parts, which the scheduler turns into a `URLRequest` only when it
    /// starts; the bearer token is read now.
    func prepare() throws(ServiceError) -> PreparedRequest {
        let (url, host) = try location()
        // Header names are case-insensitive: a later layer replaces an earlier one whatever
        // its spelling. The defaults are shared, not copied, unless a layer adds to them.
        var headers = defaultHeaders
        if let token = bearerToken() {
            headers["Authorization"] = "Bearer \(token)"
        }
        var bodyData: Data?
        if let body {
            guard !method.sendsParametersInQuery else {
                throw .invalidRequest(reason: "a \(method.rawValue) request cannot carry a body")
            }
            bodyData = try body.makeData()
            headers["Content-Type"] = body.contentType
        }
        headers.merge(self.headers)
        let parts = PreparedRequest.Parts(method: method.rawValue, url: url, headers: headers, body: bodyData,
                                          timeout: timeout ?? defaultTimeout)
        return PreparedRequest(parts, host: host)
    }

    /// The absolute URL, and the host key of its budget.
    private func location() throws(ServiceError) -> (url: String, host: String) {
        if let baseHost, let url = APIClient.plainURL(base: baseURL, path: path, query: query) {
            return (url, baseHost)
        }
        let url = try APIClient.componentsURL(base: baseURL, path: path, query: query)
        guard let host = PreparedRequest.hostKey(of: url) else {
            throw .invalidRequest(reason: "\(url.absoluteString) has no host")
        }
        return (url.absoluteString, host)
    }
}
