import Foundation

/// Sorts the members of every JSON object by their keys, as written, and keeps every other
/// token (strings, numbers, literals) byte for byte: for the output of an encoder that does not
/// sort keys, whose member order varies from one encode of a value to the next. Member order
/// carries no meaning in JSON (RFC 8259 §4), so the document is the same; whitespace between
/// tokens is dropped.
enum JSONMemberOrder {
    /// `json` with its objects' members sorted, or nil if it is not one JSON text (an encoder
    /// subclass may write something else, which is then sent as it is).
    static func sorted(_ json: Data) -> Data? {
        var reader = Reader(bytes: Array(json))
        var output: [UInt8] = []
        output.reserveCapacity(json.count)
        guard (try? reader.value(into: &output, depth: 0)) != nil else { return nil }
        reader.skipWhitespace()
        guard reader.isAtEnd else { return nil }
        return Data(output)
    }

    private struct Malformed: Error {}

    private struct Reader {
        let bytes: [UInt8]
        var position = 0

        /// Deep enough for any model; a deeper text is left as it is.
        static let maximumDepth = 512

        var isAtEnd: Bool { position == bytes.count }

        mutating func skipWhitespace() {
            while position < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[position]) { position += 1 }
        }

        mutating func value(into output: inout [UInt8], depth: Int) throws {
            guard depth < Self.maximumDepth else { throw Malformed() }
            skipWhitespace()
            guard position < bytes.count else { throw Malformed() }
            switch bytes[position] {
            case UInt8(ascii: "{"): try object(into: &output, depth: depth)
            case UInt8(ascii: "["): try array(into: &output, depth: depth)
            case UInt8(ascii: "\""): output.append(contentsOf: try string())
            default: output.append(contentsOf: try scalar())
            }
        }

        private mutating func object(into output: inout [UInt8], depth: Int) throws {
            position += 1
            var members: [(key: ArraySlice<UInt8>, value: [UInt8])] = []
            skipWhitespace()
            if position < bytes.count, bytes[position] == UInt8(ascii: "}") {
                position += 1
            } else {
                while true {
                    skipWhitespace()
                    guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else { throw Malformed() }
                    let key = try string()
                    try expect(UInt8(ascii: ":"))
                    var value: [UInt8] = []
                    try self.value(into: &value, depth: depth + 1)
                    members.append((key, value))
                    if try endOrSeparator(UInt8(ascii: "}")) { break }
                }
            }
            output.append(UInt8(ascii: "{"))
            for (index, member) in members.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }).enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                output.append(contentsOf: member.key)
                output.append(UInt8(ascii: ":"))
                output.append(contentsOf: member.value)
            }
            output.append(UInt8(ascii: "}"))
        }

        private mutating func array(into output: inout [UInt8], depth: Int) throws {
            position += 1
            output.append(UInt8(ascii: "["))
            skipWhitespace()
            if position < bytes.count, bytes[position] == UInt8(ascii: "]") {
                position += 1
            } else {
                var isFirst = true
                while true {
                    if !isFirst { output.append(UInt8(ascii: ",")) }
                    isFirst = false
                    try value(into: &output, depth: depth + 1)
                    if try endOrSeparator(UInt8(ascii: "]")) { break }
                }
            }
            output.append(UInt8(ascii: "]"))
        }

        /// A string token as written, quotes and escapes included.
        private mutating func string() throws -> ArraySlice<UInt8> {
            let start = position
            position += 1
            while position < bytes.count {
                switch bytes[position] {
                case UInt8(ascii: "\\"): position += 2
                case UInt8(ascii: "\""):
                    position += 1
                    return bytes[start..<position]
                default: position += 1
                }
            }
            throw Malformed()
        }

        /// A number or a literal, as written.
        private mutating func scalar() throws -> ArraySlice<UInt8> {
            let start = position
            while position < bytes.count, !Self.endsScalar(bytes[position]) { position += 1 }
            guard position > start else { throw Malformed() }
            return bytes[start..<position]
        }

        private static func endsScalar(_ byte: UInt8) -> Bool {
            [UInt8(ascii: ","), UInt8(ascii: "]"), UInt8(ascii: "}"), UInt8(ascii: ":"), 0x20, 0x09, 0x0A, 0x0D,
             UInt8(ascii: "{"), UInt8(ascii: "["), UInt8(ascii: "\"")].contains(byte)
        }

        private mutating func expect(_ byte: UInt8) throws {
            skipWhitespace()
            guard position < bytes.count, bytes[position] == byte else { throw Malformed() }
            position += 1
        }

        /// Whether the container ends here (`close`), past a `,` if it goes on.
        private mutating func endOrSeparator(_ close: UInt8) throws -> Bool {
            skipWhitespace()
            guard position < bytes.count else { throw Malformed() }
            position += 1
            switch bytes[position - 1] {
            case close: return true
            case UInt8(ascii: ","): return false
            default: throw Malformed()
            }
        }
    }
}
