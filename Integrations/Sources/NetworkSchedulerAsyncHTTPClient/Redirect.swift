import AsyncHTTPClient
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NetworkScheduler

/// How a redirect is followed: which request comes next, if any.
enum Redirect {
    /// Whether `status` is one a redirect is answered with.
    static func isRedirect(_ status: Int) -> Bool {
        [301, 302, 303, 307, 308].contains(status)
    }

    /// The request a redirect asks for, or nil when an answer of `status` with `location` is
    /// the answer (not a redirect, or one the policy does not follow). Throws when its
    /// `Location` is not a URL to follow.
    static func next(status: Int, location: String?, of request: URLRequest, policy: TransportPolicy) throws -> URLRequest? {
        guard isRedirect(status), let location else {
            return nil
        }
        guard let from = request.url, let target = target(of: location, from: from) else {
            throw URLError(.badServerResponse, userInfo: [NSLocalizedDescriptionKey: "a redirect to a Location that is not an http(s) URL"])
        }
        var next = request
        next.url = target
        // 303, and 301 or 302 after a POST, turn into a GET without a body (RFC 9110 §15.4).
        if status == 303 || ((status == 301 || status == 302) && request.httpMethod == "POST") {
            next.httpMethod = "GET"
            next.httpBody = nil
            next.setValue(nil, forHTTPHeaderField: "Content-Type")
            next.setValue(nil, forHTTPHeaderField: "Content-Length")
        }
        // Whether to follow it, and with which headers: the rule URLSession's transport applies.
        return policy.request(following: next, from: from)
    }

    /// `location` resolved against `base`, if it is an http(s) URL whose host is a plain name,
    /// an IPv4 address or a bracketed IPv6 one: nothing escaped, nothing a resolver would read
    /// another way.
    static func target(of location: String, from base: URL) -> URL? {
        guard let url = URL(string: location, relativeTo: base)?.absoluteURL,
              let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let components = URLComponents(url: url, resolvingAgainstBaseURL: false),
              let host = components.percentEncodedHost, !host.isEmpty,
              host.unicodeScalars.allSatisfy({ isHostCharacter($0) }) else { return nil }
        return url
    }

    private static func isHostCharacter(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "a"..."z", "A"..."Z", "0"..."9", "-", ".", "[", "]", ":": true
        default: false
        }
    }
}
