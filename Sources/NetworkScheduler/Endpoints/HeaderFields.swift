/// HTTP header fields, as a request or an answer has them: in the order they were added, a
/// name once per value it repeats with, and names compared whatever the case of their letters.
///
/// One type for every header the library reads or writes: a resource's and a client's headers,
/// what a transport sends and reads, a server's answer in an error, the cache and the key that
/// tells identical requests apart. Written as a dictionary literal; a name given twice is sent
/// twice.
///
/// ```swift
/// var headers: HeaderFields = ["Accept": "application/json"]
/// headers["accept"]                           // "application/json"
/// headers.append(name: "Accept-Language", value: "fr")
/// headers.append(name: "Accept-Language", value: "en;q=0.8")
/// headers["Accept-Language"]                  // "fr, en;q=0.8"
/// headers.values(for: "accept-language")      // ["fr", "en;q=0.8"]
/// ```
///
/// Two are equal when they have the same values for each name, in the same order, whatever the
/// order of different names and the case of any name.
public struct HeaderFields: Sendable, RandomAccessCollection, ExpressibleByDictionaryLiteral {
    private var fields: [(name: String, value: String)]

    /// No fields.
    public init() {
        fields = []
    }

    /// The fields in the order written; a name written twice is kept twice.
    ///
    /// - Parameter elements: each field's name and value.
    public init(dictionaryLiteral elements: (String, String)...) {
        fields = elements.map { (name: $0.0, value: $0.1) }
    }

    /// The fields in the order given.
    ///
    /// - Parameter fields: the fields, a repeated name once per value.
    public init(_ fields: some Sequence<(name: String, value: String)>) {
        self.fields = Array(fields)
    }

    /// The fields of a dictionary, such as a `URLRequest`'s, ordered by name.
    ///
    /// - Parameter dictionary: the fields, one value per name.
    public init(_ dictionary: [String: String]) {
        fields = dictionary.map { (name: $0.key, value: $0.value) }.sorted { $0.name < $1.name }
    }

    public var startIndex: Int { fields.startIndex }
    public var endIndex: Int { fields.endIndex }
    public subscript(position: Int) -> (name: String, value: String) { fields[position] }

    /// The values of the field `name`, whatever its case, joined with ", ", or nil if it has
    /// none. Setting it replaces every value of that name by the one given, where its first
    /// value was; setting nil removes them.
    ///
    /// - Parameter name: the field's name.
    public subscript(name: String) -> String? {
        get {
            var found: String?
            for field in fields where Self.isSameName(field.name, name) {
                found = found.map { "\($0), \(field.value)" } ?? field.value
            }
            return found
        }
        set {
            let first = fields.firstIndex { Self.isSameName($0.name, name) }
            if first != nil { fields.removeAll { Self.isSameName($0.name, name) } }
            // Nothing before the first was removed, so it is still where that value goes.
            if let newValue { fields.insert((name: name, value: newValue), at: first ?? fields.endIndex) }
        }
    }

    /// The values of the field `name`, whatever its case, in order.
    ///
    /// - Parameter name: the field's name.
    public func values(for name: String) -> [String] {
        fields.compactMap { Self.isSameName($0.name, name) ? $0.value : nil }
    }

    /// Adds a value for `name` after the fields it has, keeping any it already has.
    ///
    /// - Parameters:
    ///   - name: the field's name.
    ///   - value: its value.
    public mutating func append(name: String, value: String) {
        fields.append((name: name, value: value))
    }

    /// Every field of `other` replaces those of its name here: a later layer of headers (a
    /// resource's over its client's) wins whatever the case it spells a name in.
    mutating func merge(_ other: HeaderFields) {
        for name in other.names { self[name] = nil }
        fields.append(contentsOf: other.fields)
    }

    /// Each name once, spelled as it first comes.
    public var names: [String] {
        var names: [String] = []
        for field in fields where !names.contains(where: { Self.isSameName($0, field.name) }) {
            names.append(field.name)
        }
        return names
    }

    /// One value per name, for the Foundation types that hold no more (`URLRequest`,
    /// `HTTPURLResponse`): a repeated name's values joined with ", " (RFC 9110 §5.3), but
    /// `Cookie`'s with "; " (RFC 6265 §5.4).
    var dictionary: [String: String] {
        var dictionary: [String: String] = [:]
        dictionary.reserveCapacity(fields.count)
        for (index, field) in fields.enumerated() {
            guard let first = fields[..<index].first(where: { Self.isSameName($0.name, field.name) }) else {
                dictionary[field.name] = field.value
                continue
            }
            let separator = Self.isSameName(first.name, "Cookie") ? "; " : ", "
            dictionary[first.name, default: ""] += separator + field.value
        }
        return dictionary
    }

    /// Whether both have the same values for each name that `ignored` does not hold.
    func isSame(as other: HeaderFields, ignoring ignored: (String) -> Bool) -> Bool {
        var counted = 0
        for (index, field) in fields.enumerated() where !ignored(field.name) {
            // The field is its name's n-th value here; the other's n-th value of it must match.
            let rank = fields[..<index].count { Self.isSameName($0.name, field.name) }
            let match = other.fields.lazy.filter { Self.isSameName($0.name, field.name) }.dropFirst(rank).first
            guard match?.value == field.value else { return false }
            counted += 1
        }
        return counted == other.fields.count { !ignored($0.name) }
    }

    /// A hash that the order of different names cannot change: each field's hashed alone,
    /// its name folded to lower case, and the hashes summed.
    func orderlessHash(ignoring ignored: (String) -> Bool) -> Int {
        var sum = 0
        for field in fields where !ignored(field.name) {
            var hasher = Hasher()
            for byte in field.name.utf8 { hasher.combine(Self.foldedCase(byte)) }
            hasher.combine(field.value)
            sum &+= hasher.finalize()
        }
        return sum
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

extension HeaderFields: Hashable {
    /// Whether both have the same values for each name, in the same order.
    public static func == (lhs: HeaderFields, rhs: HeaderFields) -> Bool {
        lhs.isSame(as: rhs, ignoring: { _ in false })
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(orderlessHash(ignoring: { _ in false }))
    }
}

extension HeaderFields: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The names, not the values: a header may carry a credential, and this is what a log
    /// line or `print` shows.
    public var description: String { "[\(names.joined(separator: ", "))]" }

    /// The same as ``description``.
    public var debugDescription: String { description }

    /// The names, not the values, for `dump` and the debugger.
    public var customMirror: Mirror { Mirror(self, children: ["names": names]) }

    /// Every field with its value, as `name: value` lines: for a debugging session only.
    public var unredactedDescription: String {
        fields.map { "\($0.name): \($0.value)" }.joined(separator: "\n")
    }
}
