/// What RFC 9110 allows in a request's method, header names and values, and how a relative
/// path stays below its base: checked where a request enters the library, because
/// FoundationNetworking sends a CR/LF in a header value or a method to the wire as it is (a
/// caller, a server-given token or a default header could then add header lines or rewrite
/// the request line), and libcurl collapses dot segments (`a/../../admin` left the base path).
enum HTTPSyntax {
    /// Throws `.invalidRequest` unless `method` is a token.
    static func checkMethod(_ method: String) throws(ServiceError) {
        guard isToken(method) else {
            throw .invalidRequest(reason: "the method is not an HTTP token (RFC 9110 §9)")
        }
    }

    /// Throws `.invalidRequest`, naming the header but never its value, unless every name is a
    /// token and every value a field value.
    static func checkHeaders(_ headers: HeaderFields) throws(ServiceError) {
        for (name, value) in headers {
            guard isToken(name) else {
                throw .invalidRequest(reason: "a header name is not an HTTP token (RFC 9110 §5.1)")
            }
            guard isFieldValue(value) else {
                throw .invalidRequest(reason: "the value of the header \(name) has a control character, such as a line break")
            }
        }
    }

    /// Throws `.invalidRequest` unless `scheme` is http or https.
    static func checkScheme(_ scheme: String?) throws(ServiceError) {
        guard let scheme = scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            throw .invalidRequest(reason: "only http and https URLs are sent, not \(scheme ?? "a URL without a scheme")")
        }
    }

    /// RFC 9110's `token`: one or more of `tchar`.
    static func isToken(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { isAlphanumeric($0) || "!#$%&'*+-.^_`|~".utf8.contains($0) }
    }

    /// RFC 9110's `field-value`: visible characters, spaces and tabs, and bytes above 0x7F; no
    /// CR, LF, NUL or other control character.
    static func isFieldValue(_ text: String) -> Bool {
        text.utf8.allSatisfy { byte in byte == 0x09 || (byte >= 0x20 && byte != 0x7F) }
    }

    /// A relative path with its dot segments resolved, percent-encoded for a URL's path: a
    /// `%` that starts an escape is kept as it is (so `%2F` stays one segment), and anything
    /// else a path may not hold is encoded. Throws when `..` would climb above the base path.
    /// A segment that decodes to a dot segment (`%2e%2E`) counts as one, since servers decode it.
    static func resolvedPath(_ path: Substring) throws(ServiceError) -> String {
        var segments: [Substring] = []
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        for (index, segment) in parts.enumerated() {
            switch dotSegment(segment) {
            case 1:
                if index == parts.count - 1 { segments.append("") }
            case 2:
                guard !segments.isEmpty else {
                    throw .invalidRequest(reason: "the path climbs above the client's base path with \"..\"")
                }
                segments.removeLast()
                if index == parts.count - 1 { segments.append("") }
            default:
                segments.append(segment)
            }
        }
        return segments.map(encodedSegment).joined(separator: "/")
    }

    /// Whether `path`, which holds no escape, has a `.` or `..` segment: one byte scan, for
    /// the quick path, which leaves such paths to ``resolvedPath(_:)``.
    static func hasDotSegment(_ path: Substring) -> Bool {
        var length = 0
        var onlyDots = true
        for byte in path.utf8 {
            if byte == UInt8(ascii: "/") {
                if onlyDots, length == 1 || length == 2 { return true }
                length = 0
                onlyDots = true
            } else {
                length += 1
                onlyDots = onlyDots && byte == UInt8(ascii: ".")
            }
        }
        return onlyDots && (length == 1 || length == 2)
    }

    /// How many dots a segment that is only dots, plain or escaped, stands for: 1 or 2, or 0.
    private static func dotSegment(_ segment: Substring) -> Int {
        let lowered = segment.lowercased()
        switch lowered {
        case ".", "%2e": return 1
        case "..", ".%2e", "%2e.", "%2e%2e": return 2
        default: return 0
        }
    }

    private static func encodedSegment(_ segment: Substring) -> String {
        let bytes = Array(segment.utf8)
        var encoded = ""
        encoded.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if isPathCharacter(byte) {
                encoded.unicodeScalars.append(UnicodeScalar(byte))
            } else if byte == UInt8(ascii: "%"), index + 2 < bytes.count, isHexDigit(bytes[index + 1]), isHexDigit(bytes[index + 2]) {
                encoded += "%"
            } else {
                encoded += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
            index += 1
        }
        return encoded
    }

    /// RFC 3986's `pchar` without `%`: unreserved, sub-delims, `:` and `@`.
    private static func isPathCharacter(_ byte: UInt8) -> Bool {
        isAlphanumeric(byte) || "-._~!$&'()*+,;=:@".utf8.contains(byte)
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default:
            false
        }
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"), UInt8(ascii: "A")...UInt8(ascii: "F"):
            true
        default:
            false
        }
    }
}

private extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
