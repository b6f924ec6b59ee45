/// A serial lane: the requests sent in one lane run one at a time, in the order they were sent,
/// whatever their priorities. For mutations that must not overtake each other (PATCHes to one
/// resource, a replay of changes made offline).
///
/// A request enters its host's line only once the one before it in its lane has ended, and a
/// request whose callers all left while it ran still ends before the next one starts, so that
/// two never reach the server at once. Identical requests share a call only within one lane.
///
/// ```swift
/// let rename = Resource<Profile>(.patch, path: "me", body: .json(["name": name])).inLane("profile")
/// let avatar = Resource<Profile>(.patch, path: "me", body: .json(["avatar": id])).inLane("profile")
/// ```
public struct Lane: Hashable, Sendable {
    /// What a failure of one request of the lane does to those sent after it.
    public enum FailurePolicy: Hashable, Sendable {
        /// The next ones run as if nothing happened.
        case runTheRest
        /// Every request waiting in the lane behind it ends with ``ServiceError/cancelled``
        /// without being sent.
        case cancelTheRest
    }

    /// What identifies the lane: requests with the same name share it.
    public let name: String
    /// What this request's failure (a transport error, or a status of 400 or above) does to
    /// the requests behind it.
    public let onFailure: FailurePolicy

    /// The lane `name`, with what a failure of this request does to those behind it.
    ///
    /// - Parameters:
    ///   - name: the lane's name; requests with the same name share it.
    ///   - onFailure: whether a failure runs the rest or cancels them.
    @inlinable public init(_ name: String, onFailure: FailurePolicy = .runTheRest) {
        self.name = name
        self.onFailure = onFailure
    }
}
