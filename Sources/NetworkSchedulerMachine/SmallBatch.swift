/// A few values, in order, the first kept inline. The scheduler's decisions almost always carry
/// none or one (the operation that got a freed slot, the one caller of a call), and an array
/// would allocate for that one on every request.
@usableFromInline package struct SmallBatch<Element>: Sequence {
    @usableFromInline var first: Element?
    @usableFromInline var others: [Element] = []

    @inlinable package init() {}

    @inlinable package var count: Int { first == nil ? 0 : 1 + others.count }

    @inlinable package mutating func append(_ element: Element) {
        if first == nil {
            first = element
        } else {
            others.append(element)
        }
    }

    @inlinable package mutating func append(contentsOf batch: SmallBatch) {
        for element in batch { append(element) }
    }

    @inlinable package func makeIterator() -> Iterator {
        Iterator(first: first, others: others.makeIterator())
    }

    @usableFromInline package struct Iterator: IteratorProtocol {
        @usableFromInline var first: Element?
        @usableFromInline var others: IndexingIterator<[Element]>

        @inlinable package mutating func next() -> Element? {
            if let element = first {
                first = nil
                return element
            }
            return others.next()
        }

        @inlinable init(first: Element? = nil, others: IndexingIterator<[Element]>) {
            self.first = first
            self.others = others
        }
    }
}

extension SmallBatch: Sendable where Element: Sendable {}
extension SmallBatch: Equatable where Element: Equatable {}

extension SmallBatch: ExpressibleByArrayLiteral {
    @inlinable package init(arrayLiteral elements: Element...) {
        for element in elements { append(element) }
    }
}
