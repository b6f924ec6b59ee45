/// Keeps what the monitors hear of one call in order across threads: a caller that joins a
/// call is told (`.joined`) only after the call's first caller was (`.enqueued`).
///
/// Both are told after the scheduler's lock is released, each on its own caller's thread, so
/// a joiner could be told first, and a monitor that builds per-call state (the schedule's
/// picture) dropped it. A call is marked untold as it is made, under the scheduler's lock; a
/// joiner that attaches meanwhile waits here, and the first caller tells it after itself.
final class CallAnnouncements: Sendable {
    /// The joiners of each call not told yet, in the order they joined.
    private let untold = Locked<[Int: [RequestHandle]]>([:])

    /// Call `number` was made: until ``told(_:)``, its joiners wait. Under the scheduler's lock.
    func made(_ number: Int) {
        untold.withLock { $0[number] = [] }
    }

    /// Whether `joiner`, attaching to call `number`, waits for the call to be told (it is then
    /// told by the call's first caller). Under the scheduler's lock.
    func waits(_ joiner: RequestHandle, forCall number: Int) -> Bool {
        untold.withLock { untold in untold[number]?.append(joiner) != nil }
    }

    /// Call `number` was told: the joiners that waited for it, to tell now.
    func told(_ number: Int) -> [RequestHandle] {
        untold.withLock { $0.removeValue(forKey: number) } ?? []
    }
}
