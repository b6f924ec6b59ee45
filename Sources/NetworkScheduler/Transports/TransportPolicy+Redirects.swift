import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension TransportPolicy {
    /// The request to send for a redirect, or nil when this policy does not follow it: the one
    /// rule that every transport applies, URLSession's and AsyncHTTPClient's alike.
    ///
    /// A redirect within the origin (scheme, host and port, the scheme's default port spelt
    /// out) is followed unless ``redirects`` is ``Redirects/never``; one to another origin only
    /// under ``Redirects/follow``, and then without the ``credentialHeaders`` and the
    /// ``originBoundHeaders``.
    ///
    /// - Parameters:
    ///   - redirected: the request the redirect asks for: its URL the resolved `Location`, its
    ///     method and body already changed where RFC 9110 §15.4 says (a 303; a 301 or 302 after
    ///     a POST).
    ///   - url: the URL that answered with the redirect.
    public func request(following redirected: URLRequest, from url: URL?) -> URLRequest? {
        let origin = url?.hostKey
        let isSameOrigin = origin != nil && origin == redirected.url?.hostKey
        switch redirects {
        case .never:
            return nil
        case .sameOrigin:
            return isSameOrigin ? redirected : nil
        case .follow:
            guard !isSameOrigin else { return redirected }
            var stripped = redirected
            for name in Self.credentialHeaders + originBoundHeaders {
                stripped.setValue(nil, forHTTPHeaderField: name)
            }
            return stripped
        }
    }
}
