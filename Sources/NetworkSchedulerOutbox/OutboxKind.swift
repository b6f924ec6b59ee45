import Foundation
import NetworkScheduler

/// A kind of write an ``Outbox`` keeps: its name in the journal, the lane its writes go in, in
/// order, and how a payload becomes its request. A process that opens an outbox registers the
/// kinds it knows, so that writes an earlier process enqueued are sent, and their outcomes
/// told, by this one.
///
/// ```swift
/// extension OutboxKind where Payload == PostDraft {
///     static let newPost = OutboxKind("new post", lane: "posts") { draft in .create(draft) }
/// }
/// ```
public struct OutboxKind<Payload: Codable & Sendable>: Sendable {
    /// Its name in the journal: keep it the same across versions of the app.
    public let name: String
    /// The lane its writes go in: one at a time, in the order they were enqueued, each after
    /// the one before it reached its outcome. Nil gives each write a lane of its own.
    public let lane: String?
    /// Whether a write merges with an identical one still pending (``Outbox/enqueue(_:as:)``).
    public let merging: Merging
    /// The request of a payload. The outbox adds the write's `Idempotency-Key`, the same on
    /// every attempt, in every process.
    let request: @Sendable (Payload) -> Resource<Data>

    /// Whether an enqueued write that is identical to one still pending is that write.
    public enum Merging: Sendable, Hashable {
        /// It is, if the pending one is the last enqueued in its lane: a double tap sends once.
        case withLastIdentical
        /// Never: each write is sent (a counter's "+1", where two taps mean two).
        case never
    }

    /// A kind of write.
    ///
    /// - Parameters:
    ///   - name: its name in the journal.
    ///   - lane: the lane its writes go in, in order; nil for none.
    ///   - merging: whether a write identical to the last one pending in its lane is that one;
    ///     ``Merging/withLastIdentical`` by default.
    ///   - request: the request that sends a payload; its body is read as `Data`.
    public init<Model>(_ name: String, lane: String? = nil, merging: Merging = .withLastIdentical,
                       request: @escaping @Sendable (Payload) -> Resource<Model>) {
        self.name = name
        self.lane = lane
        self.merging = merging
        // Read as bytes, which the outbox keeps for the handler; all else as the app made it.
        self.request = { payload in request(payload).reading(as: .data) }
    }
}
