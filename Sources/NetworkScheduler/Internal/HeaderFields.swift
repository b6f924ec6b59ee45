/// HTTP header fields with case-insensitive names, keeping the spelling last set.
///
/// Kept as the very dictionary a `URLRequest` takes, so building one copies nothing, and the
/// client's defaults are shared by all its requests until one adds a header. A request has a
/// handful of headers, so a lookup walks them instead of keeping a second, lowercased index.
struct HeaderFields: Sendable, Equatable {
    private(set) var dictionary: [String: String] = [:]

    init(_ headers: [String: String]) {
        merge(headers)
    }

    subscript(name: String) -> String? {
        get {
            dictionary.first { Self.isSameName($0.key, name) }?.value
        }
        set {
            if let spelling = dictionary.keys.first(where: { Self.isSameName($0, name) }), spelling != name {
                dictionary[spelling] = nil
            }
            dictionary[name] = newValue
        }
    }

    mutating func merge(_ headers: [String: String]) {
        for (name, value) in headers { self[name] = value }
    }

    /// Whether two header names are equal but for the case of their ASCII letters, compared
    /// byte by byte without lowercasing (and so allocating) either.
    static func isSameName(_ lhs: String, _ rhs: String) -> Bool {
        lhs.utf8.count == rhs.utf8.count && zip(lhs.utf8, rhs.utf8).allSatisfy { left, right in
            left == right || (left ^ right == 0x20 && (left | 0x20) >= UInt8(ascii: "a") && (left | 0x20) <= UInt8(ascii: "z"))
        }
    }

    /// An ASCII letter in lower case; any other byte as it is.
    static func foldedCase(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
    }
}
