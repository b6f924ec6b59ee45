import Foundation

/// How a value becomes a JSON body: by the app's encoder (a subclass included, its instance
/// never changed), in one order whatever the order its sets and dictionaries iterate in, so
/// that equal values make equal bytes and a request's identity can be its bytes.
///
/// Three things make an encode of one value differ from the next on Linux, and each is fixed
/// where it arises: a `Set` writes its elements in its storage's order, which differs between
/// two equal sets built apart (``CanonicalOrder`` sorts them); so does a dictionary written as
/// a list of pairs (keys other than strings and integers); and a keyed container's members come
/// out in an order that varies from one encode to the next unless the encoder sorts keys
/// (``JSONMemberOrder`` sorts an unsorted encoder's output, keeping each token as written).
package enum CanonicalJSON {
    /// `value` encoded by `encoder` as it is now, in canonical order.
    package static func encode<Value: Encodable>(_ value: Value, with encoder: JSONEncoder) throws -> Data {
        let data = try encoder.encode(ordered(value))
        guard !encoder.outputFormatting.contains(.sortedKeys) else { return data }
        return JSONMemberOrder.sorted(data) ?? data
    }

    /// Orders a set's elements or a dictionary's pairs: by their own canonical JSON, which is
    /// equal only for elements that encode alike (whose order then changes no byte).
    static let sortKeyEncoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        // Never throws for a float the app's encoder may accept.
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "+inf", negativeInfinity: "-inf",
                                                                      nan: "nan")
        return encoder
    }()

    /// What to hand the app's encoder in place of `value`: `value` itself when nothing in it
    /// can be unordered, else a form that writes the same JSON in canonical order.
    static func ordered<Item: Encodable>(_ item: Item) -> any Encodable {
        switch item {
        case is String, is Bool, is Int, is Int8, is Int16, is Int32, is Int64, is UInt, is UInt8, is UInt16, is UInt32,
             is UInt64, is Double, is Float, is Date, is Data, is URL, is Decimal, is UUID:
            return item
        case let unordered as any UnorderedCollection:
            return unordered.inCanonicalOrder()
        default:
            return CanonicalOrder<Item>(value: item)
        }
    }
}

extension JSONEncoder {
    /// A default encoder that sorts keys, shared by every JSON body and payload that does not
    /// bring its own: making one per request cost allocations a POST. Not public: a caller
    /// changing its settings would change every body's.
    @usableFromInline package static let sortingKeys: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return encoder
    }()
}

/// A value that encodes its unordered collections in one order: `Set`s by their elements' own
/// canonical JSON, dictionaries written as lists of pairs by their keys'. Everything else goes
/// to the app's encoder as it is, so that its strategies for dates, data, URLs, decimals and
/// string-keyed dictionaries still apply.
struct CanonicalOrder<Value: Encodable>: Encodable {
    let value: Value

    func encode(to encoder: any Encoder) throws {
        try value.encode(to: OrderingEncoder(base: encoder))
    }
}

/// A collection whose iteration order is not part of its value.
protocol UnorderedCollection {
    /// The same JSON, its elements in canonical order.
    func inCanonicalOrder() -> any Encodable
}

extension Set: UnorderedCollection where Element: Encodable {
    func inCanonicalOrder() -> any Encodable {
        OrderedElements(elements: CanonicalSorting.sorted(Array(self), by: { $0 }))
    }
}

extension Dictionary: UnorderedCollection where Key: Encodable, Value: Encodable {
    func inCanonicalOrder() -> any Encodable {
        // Written as an object (the encoder, or ``JSONMemberOrder``, orders its members):
        // only its values may hold something unordered.
        if Key.self == String.self || Key.self == Int.self { return mapValues { OrderedValue($0) } }
        if #available(macOS 12.3, iOS 15.4, tvOS 15.4, watchOS 8.5, *), Key.self is any CodingKeyRepresentable.Type {
            return mapValues { OrderedValue($0) }
        }
        // Written as a list of pairs, key then value, in the order of the keys.
        let pairs = CanonicalSorting.sorted(Array(self), by: \.key)
        return OrderedElements(elements: pairs.flatMap { [CanonicalJSON.ordered($0.key), CanonicalJSON.ordered($0.value)] })
    }
}

/// A value in canonical order, handed to the encoder as itself when nothing in it can be
/// unordered (a date in a dictionary keeps the app's date strategy).
private struct OrderedValue: Encodable {
    let value: any Encodable

    init(_ value: some Encodable) { self.value = CanonicalJSON.ordered(value) }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(value)
    }
}

/// Elements written as a JSON array in the order given.
private struct OrderedElements: Encodable {
    let elements: [any Encodable]

    func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        for element in elements { try container.encode(CanonicalJSON.ordered(element)) }
    }
}

private enum CanonicalSorting {
    /// `items` ordered by the canonical JSON of `key(item)`: strings by themselves, which is
    /// cheaper. An item that cannot be encoded alone keeps the collection's order.
    static func sorted<Item, Key: Encodable>(_ items: [Item], by key: (Item) -> Key) -> [Item] {
        if Key.self == String.self {
            return items.sorted { (key($0) as! String) < (key($1) as! String) }
        }
        let keyed = items.map { item in
            (item, (try? CanonicalJSON.sortKeyEncoder.encode(CanonicalJSON.ordered(key(item)))) ?? Data())
        }
        return keyed.sorted { $0.1.lexicographicallyPrecedes($1.1) }.map(\.0)
    }
}
