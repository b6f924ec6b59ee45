/// The network calls in flight, by key, for identical requests to join.
///
/// The table is keyed by each key's hash, an integer stored in the table itself, so that a
/// lookup, a removal and the table's growth compare and move integers and never read the keys
/// of other calls: with 20,000 calls in flight those keys are spread over megabytes, and
/// reading them was most of the table's cost. Calls whose different keys share a hash, which
/// is vanishingly rare, are chained through ``SchedulerState/Call/nextWithSameHash``.
struct CallRegistry {
    private var heads: [Int: SchedulerState.Call] = [:]

    /// How many calls are registered.
    private(set) var count = 0

    /// The call registered under `key`, if any.
    func call(for key: RequestKey) -> SchedulerState.Call? {
        var candidate = heads[key.hash]
        while let call = candidate {
            if call.key == key { return call }
            candidate = call.nextWithSameHash
        }
        return nil
    }

    /// Registers a call under its key, which no registered call has.
    mutating func insert(_ call: SchedulerState.Call) {
        guard let key = call.key else { return }
        call.nextWithSameHash = heads.updateValue(call, forKey: key.hash)
        count += 1
    }

    /// Unregisters a call, if it is registered.
    mutating func remove(_ call: SchedulerState.Call) {
        guard let hash = call.key?.hash, let head = heads[hash] else { return }
        defer { call.nextWithSameHash = nil }
        if head === call {
            if let next = call.nextWithSameHash {
                heads[hash] = next
            } else {
                heads.removeValue(forKey: hash)
            }
            count -= 1
            return
        }
        var previous = head
        while let next = previous.nextWithSameHash {
            if next === call {
                previous.nextWithSameHash = call.nextWithSameHash
                count -= 1
                return
            }
            previous = next
        }
    }
}
