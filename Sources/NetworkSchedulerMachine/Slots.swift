/// Where a value lives in ``Slots``: its place, and which of the values that held that place
/// it is, so that an identifier outliving its value finds nothing rather than its successor.
@usableFromInline struct SlotID: Hashable, Sendable, CustomStringConvertible {
    @usableFromInline let index: Int32
    @usableFromInline let generation: UInt32

    @inlinable var description: String { "\(index).\(generation)" }

    @inlinable init(index: Int32, generation: UInt32) {
        self.index = index
        self.generation = generation
    }
}

/// Values reached by a ``SlotID`` in constant time, without hashing: an array whose free places
/// are reused. The machine keeps its callers and calls here.
@usableFromInline struct Slots<Element> {
    @usableFromInline var elements: [Element?] = []
    @usableFromInline var generations: [UInt32] = []
    @usableFromInline var free: [Int32] = []
    /// The generation of places made from now on (see `removeAll`).
    @usableFromInline var base: UInt32 = 0

    /// How many values are held.
    @usableFromInline var count = 0

    /// Stores `element` and returns where it is.
    @inlinable mutating func insert(_ element: Element) -> SlotID {
        count += 1
        if let index = free.popLast() {
            elements[Int(index)] = element
            return SlotID(index: index, generation: generations[Int(index)])
        }
        elements.append(element)
        generations.append(base)
        return SlotID(index: Int32(elements.count - 1), generation: base)
    }

    /// Whether `id` names a value still held.
    @inlinable func contains(_ id: SlotID) -> Bool {
        let index = Int(id.index)
        return index < elements.count && generations[index] == id.generation && elements[index] != nil
    }

    /// The value `id` names, or nil if it was removed.
    @inlinable func lookup(_ id: SlotID) -> Element? {
        contains(id) ? elements[Int(id.index)] : nil
    }

    /// The value `id` names, which must still be held.
    @inlinable subscript(id: SlotID) -> Element {
        get {
            precondition(contains(id), "slot \(id) is not held")
            return elements[Int(id.index)]!
        }
        _modify {
            precondition(contains(id), "slot \(id) is not held")
            yield &elements[Int(id.index)]!
        }
    }

    /// Removes the value `id` names, which must still be held, and returns it.
    @discardableResult
    @inlinable mutating func remove(_ id: SlotID) -> Element {
        precondition(contains(id), "slot \(id) is not held")
        let index = Int(id.index)
        let element = elements[index].take()!
        generations[index] &+= 1
        free.append(id.index)
        count -= 1
        if count == 0 { removeAll() }
        return element
    }

    /// Every value held, with its identifier.
    @inlinable var all: [(id: SlotID, element: Element)] {
        var all: [(id: SlotID, element: Element)] = []
        all.reserveCapacity(count)
        for index in elements.indices {
            if let element = elements[index] {
                all.append((SlotID(index: Int32(index), generation: generations[index]), element))
            }
        }
        return all
    }

    /// Lets go of the storage once nothing is held, keeping it when it is small.
    @inlinable mutating func removeAll() {
        guard elements.count > 1_024 else { return }
        // New places must not reuse a generation an old identifier may still carry.
        let next = (generations.max() ?? 0) &+ 1
        elements = []
        generations = []
        free = []
        base = next
    }

    @inlinable init() {}
}

extension Slots: Sendable where Element: Sendable {}
