import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Changes a client's request as each of its attempts starts: signs the body with the time
/// of sending, adds a header computed then. It runs after the request was matched with
/// identical ones (so a signature with a timestamp does not keep them from sharing a call),
/// again for every retry, and within the attempt's timeout.
///
/// ```swift
/// api.requestAdapter = RequestAdapter { request in
///     var request = request
///     request.setValue(try await signer.signature(of: request), forHTTPHeaderField: "X-Signature")
///     return request
/// }
/// ```
///
/// What it returns is checked as every request is (method and header syntax) and must keep
/// the request's origin, so that no credential reaches another server; a request that fails the
/// check ends with ``ServiceError/invalidRequest(reason:)``. An error it throws ends the
/// attempt: a ``ServiceError`` as it is, any other as ``ServiceError/underlying(_:)``. Neither is
/// retried.
///
/// Since what it adds is known only as the request goes, requests share a call only with those
/// of the same adapter (of one client), and the scheduler's cache leaves its requests alone:
/// an adapter that adds a user's `Authorization` would otherwise make one user's answer
/// another's. See <doc:Caching>.
public struct RequestAdapter: Sendable {
    /// Its closure, in a box whose identity tells adapters apart (closures have none).
    private final class Adapt: Sendable {
        let adapt: @Sendable (URLRequest) async throws -> URLRequest
        init(_ adapt: @escaping @Sendable (URLRequest) async throws -> URLRequest) { self.adapt = adapt }
    }

    private let box: Adapt

    /// An adapter that runs `adapt` on each attempt's request.
    ///
    /// - Parameter adapt: returns the request to send, from the one about to be sent.
    public init(_ adapt: @escaping @Sendable (URLRequest) async throws -> URLRequest) {
        box = Adapt(adapt)
    }

    /// Tells this adapter (and its copies) from every other, for deduplication.
    var identity: ObjectIdentifier { ObjectIdentifier(box) }

    /// `request` adapted and checked.
    func adapted(_ request: URLRequest) async throws(ServiceError) -> URLRequest {
        let adapted: URLRequest
        do {
            adapted = try await box.adapt(request)
        } catch let error as ServiceError {
            throw error
        } catch {
            throw .underlying(ServiceError.UnderlyingError(error))
        }
        guard let url = adapted.url, let original = request.url,
              url.scheme?.lowercased() == original.scheme?.lowercased(),
              url.host?.lowercased() == original.host?.lowercased(), url.port == original.port else {
            throw .invalidRequest(reason: "the request adapter moved the request to another origin")
        }
        try HTTPSyntax.checkMethod(adapted.httpMethod ?? "GET")
        try HTTPSyntax.checkHeaders(adapted.allHTTPHeaderFields ?? [:])
        return adapted
    }
}
