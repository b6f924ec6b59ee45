/// The callers subscribed to one network call. Almost every call has one, which is kept
/// without allocating a set; joiners turn it into a set.
struct Subscribers: Sequence {
    private enum Storage {
        case one(RequestID)
        case many(Set<RequestID>)
    }

    private var storage: Storage

    init(_ first: RequestID) {
        storage = .one(first)
    }

    var count: Int {
        switch storage {
        case .one: 1
        case .many(let set): set.count
        }
    }

    mutating func insert(_ id: RequestID) {
        switch storage {
        case .one(let first):
            storage = .many([first, id])
        case .many(var set):
            storage = .one(id) // lets go of the set, so that the insertion does not copy it
            set.insert(id)
            storage = .many(set)
        }
    }

    mutating func remove(_ id: RequestID) {
        guard case .many(var set) = storage else { return }
        storage = .one(id)
        set.remove(id)
        storage = .many(set)
    }

    func makeIterator() -> Iterator {
        switch storage {
        case .one(let id): Iterator(storage: .one(id))
        case .many(let set): Iterator(storage: .many(set.makeIterator()))
        }
    }

    /// Walks the callers without boxing: one per delivery, on every call's hot path.
    struct Iterator: IteratorProtocol {
        fileprivate enum Storage {
            case one(RequestID?)
            case many(Set<RequestID>.Iterator)
        }

        fileprivate var storage: Storage

        mutating func next() -> RequestID? {
            switch storage {
            case .one(let id):
                storage = .one(nil)
                return id
            case .many(var iterator):
                let id = iterator.next()
                storage = .many(iterator)
                return id
            }
        }
    }
}
