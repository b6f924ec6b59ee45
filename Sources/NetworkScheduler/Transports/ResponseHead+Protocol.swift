extension ResponseHead {
    /// What the answer came over, for its host's budget: HTTP/1.x, or a protocol that carries
    /// many answers over one connection (HTTP/2, HTTP/3, and URLSession's `h2`, `h2c`, `h3`);
    /// nil when its transport did not say, or said something else.
    var hostProtocol: HostProtocol? {
        guard let version = httpVersion else { return nil }
        if Self.version(version, startsWith: "http/1") { return .http1 }
        let multiplexed = Self.version(version, startsWith: "http/2") || Self.version(version, startsWith: "http/3")
            || Self.version(version, startsWith: "h2") || Self.version(version, startsWith: "h3")
        return multiplexed ? .multiplexed(maximumStreams: nil) : nil
    }

    /// Whether `version` starts with `prefix`, whatever the case of its letters, without making
    /// a string (this is read for every answer).
    private static func version(_ version: String, startsWith prefix: StaticString) -> Bool {
        let prefix = UnsafeBufferPointer(start: prefix.utf8Start, count: prefix.utf8CodeUnitCount)
        var characters = version.utf8.makeIterator()
        for expected in prefix {
            guard let character = characters.next(), character | 0x20 == expected | 0x20 else { return false }
        }
        return true
    }
}
