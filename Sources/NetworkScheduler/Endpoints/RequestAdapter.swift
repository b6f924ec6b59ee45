import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Changes a client's request as each of its attempts starts: signs the body with the time
/// of sending, adds a header computed then (the current user's token). It runs again for every
/// retry, within the attempt's timeout.
///
/// ```swift
/// api.requestAdapter = RequestAdapter(identity: { accounts.sessionID }) { request in
///     var request = request
///     request.setValue("Bearer \(try await accounts.currentToken())", forHTTPHeaderField: "Authorization")
///     return request
/// }
/// ```
///
/// What it adds is not in the request when the scheduler matches it with identical ones, so it
/// states what that depends on: `identity` (read as each request is built) names who the
/// adapted request is for, and requests share a call, and a cached answer, only when they have
/// the same adapter and it stated the same identity. An adapter that states none
/// (``init(_:)``) shares nothing and is never cached: no user's answer reaches another. What
/// the adapter adds regardless of the user (a signature with the time of sending) does not keep
/// requests from sharing a call. If the identity is not the same once the adapter has run
/// (the user switched meanwhile), the request is not sent: its callers end with
/// ``ServiceError/invalidRequest(reason:)``, so that no answer for one user is given, or kept,
/// as another's.
///
/// What it returns is checked as every request is (method and header syntax) and must keep
/// the request's origin, so that no credential reaches another server; a request that fails the
/// check ends with ``ServiceError/invalidRequest(reason:)``. An error it throws ends the
/// attempt: a ``ServiceError`` as it is, any other as ``ServiceError/underlying(_:)``. Neither is
/// retried. See <doc:DeduplicatingRequests> and <doc:Caching>.
public struct RequestAdapter: Sendable {
    /// Its closures, in a box whose identity tells adapters apart (closures have none).
    private final class Adapt: Sendable {
        let adapt: @Sendable (URLRequest) async throws -> URLRequest
        let identity: (@Sendable () -> String?)?
        init(_ adapt: @escaping @Sendable (URLRequest) async throws -> URLRequest, identity: (@Sendable () -> String?)?) {
            self.adapt = adapt
            self.identity = identity
        }
    }

    /// Who an adapter said a request is for, as the request was built.
    enum StatedIdentity: Sendable, Hashable {
        case stated(String)
        /// It states none (or gave nil): the request is the same as no other.
        case unstated
    }

    private let box: Adapt

    /// An adapter that runs `adapt` on each attempt's request, and whose requests share a call
    /// with those for which `identity` gave the same value.
    ///
    /// - Parameters:
    ///   - identity: who the adapted request is for: everything `adapt` adds that tells users
    ///     (or devices, or accounts) apart depends on it alone. Read as each request is built
    ///     and again once `adapt` has run. Give one that changes with every sign-in (a session's
    ///     ID rather than the user's): a switch to another user and back while `adapt` runs then
    ///     shows, where the user's ID alone would read the same before and after (the chaos soak,
    ///     switching from many threads at once, once saw this in 100,000 callers). Nil: the
    ///     request shares nothing.
    ///   - adapt: returns the request to send, from the one about to be sent.
    public init(identity: @escaping @Sendable () -> String?,
                _ adapt: @escaping @Sendable (URLRequest) async throws -> URLRequest) {
        box = Adapt(adapt, identity: identity)
    }

    /// An adapter that runs `adapt` on each attempt's request, and states no identity: its
    /// requests never share a call and are never cached.
    ///
    /// - Parameter adapt: returns the request to send, from the one about to be sent.
    public init(_ adapt: @escaping @Sendable (URLRequest) async throws -> URLRequest) {
        box = Adapt(adapt, identity: nil)
    }

    /// Tells this adapter (and its copies) from every other.
    var id: ObjectIdentifier { ObjectIdentifier(box) }

    /// The identity it states now.
    func statedIdentity() -> StatedIdentity {
        box.identity?().map(StatedIdentity.stated) ?? .unstated
    }

    /// `request` adapted and checked, for `identity`, the one stated as it was built.
    func adapted(_ request: URLRequest, for identity: StatedIdentity) async throws(ServiceError) -> URLRequest {
        let adapted: URLRequest
        do {
            adapted = try await box.adapt(request)
        } catch let error as ServiceError {
            throw error
        } catch {
            throw .underlying(ServiceError.UnderlyingError(error))
        }
        guard statedIdentity() == identity else {
            throw .invalidRequest(reason: "the request adapter's identity changed after the request was built")
        }
        guard let url = adapted.url, let original = request.url,
              url.scheme?.lowercased() == original.scheme?.lowercased(),
              url.host?.lowercased() == original.host?.lowercased(), url.port == original.port else {
            throw .invalidRequest(reason: "the request adapter moved the request to another origin")
        }
        try HTTPSyntax.checkMethod(adapted.httpMethod ?? "GET")
        try HTTPSyntax.checkHeaders(HeaderFields(adapted.allHTTPHeaderFields ?? [:]))
        return adapted
    }
}
