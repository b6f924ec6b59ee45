/// Where a value lives in ``Slots``: its place, and which of the values that held that place
/// it is, so that an identifier outliving its value finds nothing rather than its successor.
struct SlotID: Hashable, Sendable, CustomStringConvertible {
    let index: Int32
    let generation: UInt32

    var description: String { "\(index).\(generation)" }
}

/// Values reached by a ``SlotID`` in constant time, without hashing: an array whose free places
/// are reused. The machine keeps its callers and calls here.
struct Slots<Element> {
    private var elements: [Element?] = []
    private var generations: [UInt32] = []
    private var free: [Int32] = []
    /// The generation of places made from now on (see `removeAll`).
    private var base: UInt32 = 0

    /// How many values are held.
    private(set) var count = 0

    /// Stores `element` and returns where it is.
    mutating func insert(_ element: Element) -> SlotID {
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
    func contains(_ id: SlotID) -> Bool {
        let index = Int(id.index)
        return index < elements.count && generations[index] == id.generation && elements[index] != nil
    }

    /// The value `id` names, or nil if it was removed.
    func lookup(_ id: SlotID) -> Element? {
        contains(id) ? elements[Int(id.index)] : nil
    }

    /// The value `id` names, which must still be held.
    subscript(id: SlotID) -> Element {
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
    mutating func remove(_ id: SlotID) -> Element {
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
    var all: [(id: SlotID, element: Element)] {
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
    private mutating func removeAll() {
        guard elements.count > 1_024 else { return }
        // New places must not reuse a generation an old identifier may still carry.
        let next = (generations.max() ?? 0) &+ 1
        elements = []
        generations = []
        free = []
        base = next
    }
}

extension Slots: Sendable where Element: Sendable {}
