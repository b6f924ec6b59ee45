/// SHA-256 (FIPS 180-4), for the cache's keys: Foundation on Linux has no digest, and the
/// cache names files and tells credentials apart by one that nobody can make collide, and a
/// file body counts in a request's identity by its content's.
struct SHA256 {
    private static let roundConstants: [UInt32] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
    ]

    /// The digest of `bytes`, as 64 lowercase hexadecimal digits.
    static func hex(_ bytes: some Collection<UInt8>) -> String {
        var hasher = SHA256()
        hasher.update(bytes)
        return hasher.hex()
    }

    /// The digest of a string's UTF-8 bytes, in hexadecimal.
    static func hex(_ text: String) -> String { hex(Array(text.utf8)) }

    private var state: [UInt32] = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]
    /// The bytes of an unfinished block.
    private var pending: [UInt8] = []
    private var length: UInt64 = 0
    private var schedule = [UInt32](repeating: 0, count: 64)

    /// A digest of nothing yet: feed it with ``update(_:)``, a chunk at a time (a file read
    /// in chunks is digested without being held whole).
    init() {
        pending.reserveCapacity(64)
    }

    mutating func update(_ bytes: some Collection<UInt8>) {
        length &+= UInt64(bytes.count)
        if bytes.withContiguousStorageIfAvailable({ feed($0) }) == nil {
            Array(bytes).withUnsafeBufferPointer { feed($0) }
        }
    }

    /// Fills the unfinished block, then compresses whole blocks straight from `bytes`.
    private mutating func feed(_ bytes: UnsafeBufferPointer<UInt8>) {
        var start = 0
        if !pending.isEmpty {
            let taken = min(64 - pending.count, bytes.count)
            pending.append(contentsOf: bytes[0..<taken])
            start = taken
            guard pending.count == 64 else { return }
            compress(pending)
            pending.removeAll(keepingCapacity: true)
        }
        while bytes.count - start >= 64 {
            compress(bytes[start..<start + 64])
            start += 64
        }
        pending.append(contentsOf: bytes[start...])
    }

    /// The digest of everything fed, as 32 bytes.
    func finalize() -> [UInt8] {
        var copy = self
        let bitLength = length &* 8
        var tail = pending
        tail.append(0x80)
        while tail.count % 64 != 56 { tail.append(0) }
        for shift in stride(from: 56, through: 0, by: -8) { tail.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift))) }
        for block in stride(from: 0, to: tail.count, by: 64) { copy.compress(tail[block..<block + 64]) }
        return copy.state.flatMap { word in (0..<4).map { UInt8(truncatingIfNeeded: word >> (24 - 8 * $0)) } }
    }

    /// The digest of everything fed, as 64 lowercase hexadecimal digits.
    func hex() -> String {
        let hexDigits = Array("0123456789abcdef".utf8)
        var text = [UInt8]()
        text.reserveCapacity(64)
        for byte in finalize() {
            text.append(hexDigits[Int(byte >> 4)])
            text.append(hexDigits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    private mutating func compress(_ block: some Collection<UInt8>) {
        var bytes = block.makeIterator()
        for index in 0..<16 {
            var word: UInt32 = 0
            for _ in 0..<4 { word = word << 8 | UInt32(bytes.next()!) }
            schedule[index] = word
        }
        for index in 16..<64 {
            let s0 = Self.rotate(schedule[index - 15], 7) ^ Self.rotate(schedule[index - 15], 18) ^ (schedule[index - 15] >> 3)
            let s1 = Self.rotate(schedule[index - 2], 17) ^ Self.rotate(schedule[index - 2], 19) ^ (schedule[index - 2] >> 10)
            schedule[index] = schedule[index - 16] &+ s0 &+ schedule[index - 7] &+ s1
        }
        var (a, b, c, d, e, f, g, h) = (state[0], state[1], state[2], state[3], state[4], state[5], state[6], state[7])
        for index in 0..<64 {
            let choice = (e & f) ^ (~e & g)
            let t1 = h &+ (Self.rotate(e, 6) ^ Self.rotate(e, 11) ^ Self.rotate(e, 25)) &+ choice &+ Self.roundConstants[index]
                &+ schedule[index]
            let majority = (a & b) ^ (a & c) ^ (b & c)
            let t2 = (Self.rotate(a, 2) ^ Self.rotate(a, 13) ^ Self.rotate(a, 22)) &+ majority
            (h, g, f, e, d, c, b, a) = (g, f, e, d &+ t1, c, b, a, t1 &+ t2)
        }
        for (index, value) in zip(state.indices, [a, b, c, d, e, f, g, h]) { state[index] &+= value }
    }

    private static func rotate(_ value: UInt32, _ count: UInt32) -> UInt32 {
        value >> count | value << (32 - count)
    }
}
