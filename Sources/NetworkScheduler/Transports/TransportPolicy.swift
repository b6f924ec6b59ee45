/// What a transport must enforce for one attempt, whatever the server does.
public struct TransportPolicy: Sendable {
    /// Which redirects a request follows.
    public enum Redirects: Sendable, Hashable {
        /// Follows every redirect; one that changes scheme, host or port drops the credential
        /// headers (``credentialHeaders``, and those of the scheduler's
        /// ``RequestScheduler/Configuration-swift.struct/credentialHeaders``) and the headers
        /// its client adds for its own server.
        case follow
        /// Follows redirects within the request's origin only (scheme, host and port); another
        /// redirect's response is the answer (a 3xx, which fails as ``ServiceError/server(_:)``
        /// unless the resource accepts it).
        case sameOrigin
        /// Follows none: the 3xx is the answer.
        case never
    }

    /// Which redirects to follow.
    public var redirects: Redirects
    /// The most bytes of body to read; past it the transport stops reading and the attempt
    /// fails with ``ServiceError/responseTooLarge(limit:)``. Counted after decompression.
    public var maximumResponseSize: Int
    /// Headers added for the request's own origin only, dropped on a redirect elsewhere, with
    /// ``credentialHeaders``.
    public var originBoundHeaders: [String]
    /// How urgent the attempt is as it starts: a hint (`URLSessionTask.priority`, HTTP/2
    /// priority on Apple platforms). A change while it runs arrives through
    /// ``TransportTask/reprioritize(to:)``.
    public var priority: RequestPriority

    /// Headers a redirect to another origin always drops, whatever the policy names: those that
    /// say who a request is for.
    public static let credentialHeaders = ["Authorization", "Proxy-Authorization", "Cookie", "X-API-Key", "X-Auth-Token",
                                           "API-Key"]

    /// A policy; every parameter has the default described on its property.
    ///
    /// - Parameters:
    ///   - redirects: which redirects to follow.
    ///   - maximumResponseSize: the most bytes of body to read.
    ///   - originBoundHeaders: headers dropped on a redirect to another origin.
    ///   - priority: the call's priority, a hint for the transport.
    public init(
        redirects: Redirects = .follow,
        maximumResponseSize: Int = RequestScheduler.Configuration.defaultMaximumResponseSize,
        originBoundHeaders: [String] = [],
        priority: RequestPriority = .normal
    ) {
        self.redirects = redirects
        self.maximumResponseSize = maximumResponseSize
        self.originBoundHeaders = originBoundHeaders
        self.priority = priority
    }
}
