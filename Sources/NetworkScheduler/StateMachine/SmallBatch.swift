/// A few values, in order, the first kept inline. The scheduler's decisions almost always carry
/// none or one (the operation that got a freed slot, the one caller of a call), and an array
/// would allocate for that one on every request.
struct SmallBatch<Element>: Sequence {
    private var first: Element?
    private var others: [Element] = []

    init() {}

    var count: Int { first == nil ? 0 : 1 + others.count }

    mutating func append(_ element: Element) {
        if first == nil {
            first = element
        } else {
            others.append(element)
        }
    }

    mutating func append(contentsOf batch: SmallBatch) {
        for element in batch { append(element) }
    }

    func makeIterator() -> Iterator {
        Iterator(first: first, others: others.makeIterator())
    }

    struct Iterator: IteratorProtocol {
        fileprivate var first: Element?
        fileprivate var others: IndexingIterator<[Element]>

        mutating func next() -> Element? {
            if let element = first {
                first = nil
                return element
            }
            return others.next()
        }
    }
}

extension SmallBatch: Sendable where Element: Sendable {}
extension SmallBatch: Equatable where Element: Equatable {}

extension SmallBatch: ExpressibleByArrayLiteral {
    init(arrayLiteral elements: Element...) {
        for element in elements { append(element) }
    }
}
