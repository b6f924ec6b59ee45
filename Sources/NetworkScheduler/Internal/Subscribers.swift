/// The callers subscribed to one network call. Almost every call has one, which is kept
/// without allocating a table; joiners turn it into one, by ID, so that any of them can leave
/// in constant time.
struct Subscribers: Sequence {
    private enum Storage {
        case one(RequestHandle)
        case many([RequestID: RequestHandle])
    }

    private var storage: Storage

    init(_ first: RequestHandle) {
        storage = .one(first)
    }

    var count: Int {
        switch storage {
        case .one: 1
        case .many(let table): table.count
        }
    }

    mutating func insert(_ handle: RequestHandle) {
        switch storage {
        case .one(let first):
            storage = .many([first.id: first, handle.id: handle])
        case .many(var table):
            storage = .one(handle) // lets go of the table, so that the insertion does not copy it
            table[handle.id] = handle
            storage = .many(table)
        }
    }

    mutating func remove(_ handle: RequestHandle) {
        guard case .many(var table) = storage else { return }
        storage = .one(handle)
        table[handle.id] = nil
        storage = .many(table)
    }

    func makeIterator() -> Iterator {
        switch storage {
        case .one(let handle): Iterator(storage: .one(handle))
        case .many(let table): Iterator(storage: .many(table.values.makeIterator()))
        }
    }

    /// Walks the callers without boxing: one per delivery, on every call's hot path.
    struct Iterator: IteratorProtocol {
        fileprivate enum Storage {
            case one(RequestHandle?)
            case many(Dictionary<RequestID, RequestHandle>.Values.Iterator)
        }

        fileprivate var storage: Storage

        mutating func next() -> RequestHandle? {
            switch storage {
            case .one(let handle):
                storage = .one(nil)
                return handle
            case .many(var iterator):
                let handle = iterator.next()
                storage = .many(iterator)
                return handle
            }
        }
    }
}
