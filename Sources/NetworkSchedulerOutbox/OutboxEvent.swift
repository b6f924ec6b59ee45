import Foundation
import NetworkScheduler

/// What an ``Outbox`` writes to its journal, one record each: the history of its writes, from
/// which a process that opens it learns what is pending and what is told.
enum OutboxEvent: Codable, Equatable, Sendable {
    /// A write was accepted: its kind, lane and payload, and the key every attempt carries.
    case enqueued(OutboxEntry)
    /// The server answered a write with a final outcome (kept until it was told).
    case finished(id: UUID, outcome: OutboxOutcome)
    /// The app was told the outcome of a write: it is gone.
    case told(id: UUID)
    /// A dead letter was dropped by the app.
    case dropped(id: UUID)
    /// A dead letter was sent again, as a new write: one record, so that no failure between
    /// two leaves both the dead letter and its new write (a second resend would send it twice).
    case resent(id: UUID, as: OutboxEntry)
}

/// A write an ``Outbox`` keeps until its outcome was told.
public struct OutboxEntry: Codable, Equatable, Sendable, Identifiable {
    /// It, across processes.
    public let id: UUID
    /// Its kind's name.
    public let kind: String
    /// Its lane, if it has one.
    public let lane: String?
    /// The `Idempotency-Key` of every attempt.
    public let key: String
    /// When it was enqueued.
    public let enqueuedAt: Date
    /// Its payload, as JSON.
    let payload: Data
}

/// Where a write an ``Outbox`` holds is: for a badge, or a "sending…" row.
public struct OutboxWriteState: Sendable, Equatable {
    /// Where it is.
    public enum Phase: Sendable, Equatable {
        /// Waiting: for the write before it in its lane, for its kind to be registered, or for
        /// its next try.
        case waiting
        /// On its way to the server.
        case sending
        /// Refused for good, or failing past its maximum age: see ``Outbox/deadLetters``.
        case deadLetter(OutboxOutcome)
    }

    /// The write.
    public let entry: OutboxEntry
    /// Where it is.
    public let phase: Phase
}

/// How a write ended, as an ``Outbox`` keeps and tells it.
public enum OutboxOutcome: Codable, Equatable, Sendable {
    /// The server took it: its status and the body it answered.
    case accepted(status: Int, body: Data)
    /// The server refused it for good (a 4xx but 408, 409, 425 and 429), or it could not be
    /// sent (an invalid request), or it was still failing at its maximum age: a dead letter,
    /// until the app drops it or sends it again. `status` is the server's, if it answered.
    case rejected(status: Int?, reason: String)
}
