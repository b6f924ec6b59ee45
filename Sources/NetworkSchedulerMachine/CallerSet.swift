/// The callers of one network call. Almost every call has one, which is kept without
/// allocating a set; joiners turn it into a set, so that any of them can leave in constant
/// time.
@usableFromInline struct CallerSet: Sequence, Sendable {
    @usableFromInline enum Storage: Sendable {
        /// A keyed POST on the wire whose callers all left (see `SchedulerMachine.orphan`).
        case none
        case one(CallerID)
        case many(Set<CallerID>)
    }

    @usableFromInline var storage: Storage

    @inlinable init(_ first: CallerID) {
        storage = .one(first)
    }

    @inlinable var count: Int {
        switch storage {
        case .none: 0
        case .one: 1
        case .many(let set): set.count
        }
    }

    @inlinable func contains(_ caller: CallerID) -> Bool {
        switch storage {
        case .none: false
        case .one(let only): only == caller
        case .many(let set): set.contains(caller)
        }
    }

    @inlinable mutating func insert(_ caller: CallerID) {
        switch storage {
        case .none:
            storage = .one(caller)
        case .one(let first):
            storage = .many([first, caller])
        case .many(var set):
            storage = .one(caller) // lets go of the set, so that the insertion does not copy it
            set.insert(caller)
            storage = .many(set)
        }
    }

    /// Removes a caller of a call that keeps at least one other.
    @inlinable mutating func remove(_ caller: CallerID) {
        guard case .many(var set) = storage else {
            preconditionFailure("a call's only caller leaves with its call")
        }
        storage = .one(caller)
        set.remove(caller)
        storage = .many(set)
    }

    /// Forgets every caller: the call goes on without any.
    @inlinable mutating func removeAll() {
        storage = .none
    }

    @inlinable func makeIterator() -> Iterator {
        switch storage {
        case .none: Iterator(storage: .one(nil))
        case .one(let caller): Iterator(storage: .one(caller))
        case .many(let set): Iterator(storage: .many(set.makeIterator()))
        }
    }

    /// Walks the callers without boxing: one per delivery, on every call's hot path.
    @usableFromInline struct Iterator: IteratorProtocol {
        @usableFromInline enum Storage {
            case one(CallerID?)
            case many(Set<CallerID>.Iterator)
        }

        @usableFromInline var storage: Storage

        @inlinable mutating func next() -> CallerID? {
            switch storage {
            case .one(let caller):
                storage = .one(nil)
                return caller
            case .many(var iterator):
                let caller = iterator.next()
                storage = .many(iterator)
                return caller
            }
        }

        @inlinable init(storage: Storage) {
            self.storage = storage
        }
    }
}
