import Foundation

/// The directives of a `Cache-Control` field (RFC 9111 §5.2), as a private cache reads them:
/// names without case, a value as a token or a quoted string, the first of a repeated
/// directive kept (§4.2.1). A value that does not parse is no value.
struct CacheControl: Equatable, Sendable {
    private(set) var directives: [String: String?] = [:]

    init(_ field: String?) {
        guard let field else { return }
        var rest = Substring(field)
        while !rest.isEmpty {
            rest = rest.drop { $0 == " " || $0 == "\t" || $0 == "," }
            let rawName = rest.prefix { $0 != "=" && $0 != "," }
            rest = rest.dropFirst(rawName.count)
            // No space is allowed around `=` (§5.2): `max-age =100` and `max-age= 100` are no
            // max-age, and such a directive counts as no directive.
            var isValid = rest.first != "=" || rawName.last.map { $0 != " " && $0 != "\t" } ?? false
            let name = rawName.trimmingCharacters(in: .whitespaces).lowercased()
            var value: String?
            if rest.first == "=" {
                rest = rest.dropFirst()
                if rest.first == " " || rest.first == "\t" { isValid = false }
                if rest.first == "\"" {
                    rest = rest.dropFirst()
                    var quoted = ""
                    while let character = rest.first, character != "\"" {
                        rest = rest.dropFirst()
                        if character == "\\", let escaped = rest.first {
                            quoted.append(escaped)
                            rest = rest.dropFirst()
                        } else {
                            quoted.append(character)
                        }
                    }
                    rest = rest.dropFirst()
                    value = quoted
                } else {
                    value = rest.prefix { $0 != "," }.trimmingCharacters(in: .whitespaces)
                }
                rest = rest.drop { $0 != "," }
            }
            if isValid, !name.isEmpty, directives[name] == nil { directives[name] = .some(value) }
        }
    }

    func has(_ name: String) -> Bool { directives[name] != nil }

    /// A directive's delta-seconds value (`max-age=60`); nil if absent or not a number.
    func seconds(_ name: String) -> TimeInterval? {
        Self.deltaSeconds(directives[name] ?? nil)
    }

    /// Delta-seconds (§1.2.2): digits only; one past 2^31 is taken as 2^31.
    static func deltaSeconds(_ value: String?) -> TimeInterval? {
        guard let value = value?.trimmingCharacters(in: .whitespaces), !value.isEmpty,
              value.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        let limit = 2_147_483_648
        return TimeInterval(value.count > 10 ? limit : min(Int(value) ?? limit, limit))
    }
}

/// How long a stored response stays fresh, and how old it is, for a private cache (RFC 9111
/// §4.2): a pure reading of a response's head and three instants, no clock of its own.
struct CacheFreshness: Equatable, Sendable {
    /// The seconds it is fresh for from its generation; zero when it must not be used unchecked.
    let lifetime: TimeInterval
    /// Whether the lifetime is a heuristic's (§4.2.2), the server having given none.
    let isHeuristic: Bool

    /// The statuses a cache may give a heuristic freshness (§4.2.2, "heuristically cacheable").
    static let heuristicallyCacheable: Set<Int> = [200, 203, 204, 206, 300, 301, 308, 404, 405, 410, 414, 501]

    /// The freshness of a response with `status` and `fields`. `s-maxage`
    /// is for shared caches and is ignored here.
    init(status: Int, fields: HeaderFields) {
        let control = CacheControl(fields["cache-control"])
        if let maxAge = control.seconds("max-age") {
            (lifetime, isHeuristic) = (maxAge, false)
            return
        }
        let date = fields["date"].flatMap(HTTPDate.parse)
        if let expires = fields["expires"] {
            // An Expires that does not parse is in the past (§5.3).
            let expiry = HTTPDate.parse(expires) ?? .distantPast
            (lifetime, isHeuristic) = (max(0, expiry.timeIntervalSince(date ?? expiry)), false)
            return
        }
        guard Self.heuristicallyCacheable.contains(status) || control.has("public"),
              let modified = fields["last-modified"].flatMap(HTTPDate.parse), let date, date > modified else {
            (lifetime, isHeuristic) = (0, false)
            return
        }
        // A tenth of the time since it last changed, as the RFC suggests, at most a day.
        (lifetime, isHeuristic) = (min(date.timeIntervalSince(modified) / 10, 86_400), true)
    }

    /// Its age now (§4.2.3): what its `Age` and `Date` say it had when it arrived, plus the
    /// time since. `requested` and `received` bound the exchange that brought it.
    static func age(fields: HeaderFields, requested: Date, received: Date, now: Date) -> TimeInterval {
        let ageValue = CacheControl.deltaSeconds(fields["age"]) ?? 0
        let apparent = max(0, received.timeIntervalSince(fields["date"].flatMap(HTTPDate.parse) ?? received))
        let corrected = ageValue + received.timeIntervalSince(requested)
        return max(apparent, corrected) + now.timeIntervalSince(received)
    }
}

/// HTTP dates (RFC 9110 §5.6.7): IMF-fixdate, and the obsolete RFC 850 and asctime forms a
/// recipient must read.
enum HTTPDate {
    private static let formats = ["EEE, dd MMM yyyy HH:mm:ss 'GMT'", "EEEE, dd-MMM-yy HH:mm:ss 'GMT'", "EEE MMM d HH:mm:ss yyyy"]

    static func parse(_ text: String) -> Date? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        for format in formats {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = format
            if let date = formatter.date(from: trimmed) { return date }
        }
        return nil
    }
}
