/// What a host's answers come over, as its transport tells: a host's budget follows it.
@usableFromInline package enum HostProtocol: Equatable, Sendable {
    /// One answer at a time per connection (HTTP/1.x): the budget counts connections.
    case http1
    /// Many answers at once over one connection (HTTP/2, HTTP/3): the budget counts streams,
    /// the most the server allows at once if the transport knows it.
    case multiplexed(maximumStreams: Int?)

    /// The most streams a multiplexed host is given whatever its server says: a server that
    /// claims millions would have every waiting call start at once, and the transport queue
    /// them in no useful order.
    @inlinable package static var streamCeiling: Int { 1_000 }
}
