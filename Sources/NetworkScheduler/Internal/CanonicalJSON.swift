import Foundation

extension JSONEncoder {
    /// This encoder if it sorts every object's keys, else a copy of it that does.
    ///
    /// Identical values must make identical bytes, since deduplication, the cache and the
    /// outbox tell requests apart by their bodies; but corelibs Foundation writes a keyed
    /// container's fields in an order that varies from one encode of the same value to the next
    /// within one process (a five-field model gave dozens of different bodies). Sorted keys are
    /// the same whatever that order.
    func sortingKeys() -> JSONEncoder {
        guard !outputFormatting.contains(.sortedKeys) else { return self }
        let copy = JSONEncoder()
        copy.outputFormatting = outputFormatting.union(.sortedKeys)
        copy.dateEncodingStrategy = dateEncodingStrategy
        copy.dataEncodingStrategy = dataEncodingStrategy
        copy.nonConformingFloatEncodingStrategy = nonConformingFloatEncodingStrategy
        copy.keyEncodingStrategy = keyEncodingStrategy
        copy.userInfo = userInfo
        return copy
    }

    /// A default encoder that sorts keys, shared by every JSON body and payload that does not
    /// bring its own: making one per request, and then its sorting copy, cost three allocations
    /// a POST. Not public: a caller changing its settings would change every body's.
    @usableFromInline static let sortingKeys: JSONEncoder = JSONEncoder().sortingKeys()
}
