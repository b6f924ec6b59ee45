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

    private var state: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32) =
        (0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19)
    /// The bytes of an unfinished block.
    private var pending: [UInt8] = []
    private var length: UInt64 = 0

    /// A digest of nothing yet: feed it with ``update(_:)``, a chunk at a time (a file read
    /// in chunks is digested without being held whole).
    init() {
        pending.reserveCapacity(64)
    }

    mutating func update(_ bytes: some Collection<UInt8>) {
        length &+= UInt64(bytes.count)
        if bytes.withContiguousStorageIfAvailable({ feed(UnsafeRawBufferPointer($0)) }) == nil {
            Array(bytes).withUnsafeBytes { feed($0) }
        }
    }

    /// Fills the unfinished block, then compresses whole blocks straight from `bytes`.
    private mutating func feed(_ bytes: UnsafeRawBufferPointer) {
        var start = 0
        if !pending.isEmpty {
            let taken = min(64 - pending.count, bytes.count)
            pending.append(contentsOf: bytes[0..<taken])
            start = taken
            guard pending.count == 64 else { return }
            pending.withUnsafeBytes { compress(blocks: $0) }
            pending.removeAll(keepingCapacity: true)
        }
        let whole = (bytes.count - start) / 64 * 64
        if whole > 0 { compress(blocks: UnsafeRawBufferPointer(rebasing: bytes[start..<start + whole])) }
        pending.append(contentsOf: bytes[(start + whole)...])
    }

    /// The digest of everything fed, as 32 bytes.
    func finalize() -> [UInt8] {
        var copy = self
        let bitLength = length &* 8
        var tail = pending
        tail.append(0x80)
        while tail.count % 64 != 56 { tail.append(0) }
        for shift in stride(from: 56, through: 0, by: -8) { tail.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift))) }
        tail.withUnsafeBytes { copy.compress(blocks: $0) }
        let words = [copy.state.0, copy.state.1, copy.state.2, copy.state.3, copy.state.4, copy.state.5, copy.state.6,
                     copy.state.7]
        return words.flatMap { word in (0..<4).map { UInt8(truncatingIfNeeded: word >> (24 - 8 * $0)) } }
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

    /// Compresses whole 64-byte blocks. Written for a debug build too (as tests and apps in
    /// development run, where a file body is digested before it is sent), which calls a
    /// function for each step of a range, each plain shift and each array access: so raw
    /// pointers, while loops and masking shifts, which it inlines. A release build compiles
    /// both ways to the same speed.
    private mutating func compress(blocks: UnsafeRawBufferPointer) {
        guard let base = blocks.baseAddress else { return }
        let schedule = UnsafeMutablePointer<UInt32>.allocate(capacity: 64)
        defer { schedule.deallocate() }
        Self.roundConstants.withUnsafeBufferPointer { constants in
            let k = constants.baseAddress!
            var (h0, h1, h2, h3, h4, h5, h6, h7) = state
            var block = 0
            while block < blocks.count {
                var index = 0
                while index < 16 {
                    schedule[index] = UInt32(bigEndian: base.loadUnaligned(fromByteOffset: block &+ index &* 4, as: UInt32.self))
                    index &+= 1
                }
                while index < 64 {
                    let w15 = schedule[index &- 15], w2 = schedule[index &- 2]
                    let s0 = (w15 &>> 7 | w15 &<< 25) ^ (w15 &>> 18 | w15 &<< 14) ^ (w15 &>> 3)
                    let s1 = (w2 &>> 17 | w2 &<< 15) ^ (w2 &>> 19 | w2 &<< 13) ^ (w2 &>> 10)
                    schedule[index] = schedule[index &- 16] &+ s0 &+ schedule[index &- 7] &+ s1
                    index &+= 1
                }
                var (a, b, c, d, e, f, g, h) = (h0, h1, h2, h3, h4, h5, h6, h7)
                index = 0
                while index < 64 {
                    let sigma1 = (e &>> 6 | e &<< 26) ^ (e &>> 11 | e &<< 21) ^ (e &>> 25 | e &<< 7)
                    let t1 = h &+ sigma1 &+ ((e & f) ^ (~e & g)) &+ k[index] &+ schedule[index]
                    let sigma0 = (a &>> 2 | a &<< 30) ^ (a &>> 13 | a &<< 19) ^ (a &>> 22 | a &<< 10)
                    let t2 = sigma0 &+ ((a & b) ^ (a & c) ^ (b & c))
                    (h, g, f, e, d, c, b, a) = (g, f, e, d &+ t1, c, b, a, t1 &+ t2)
                    index &+= 1
                }
                (h0, h1, h2, h3) = (h0 &+ a, h1 &+ b, h2 &+ c, h3 &+ d)
                (h4, h5, h6, h7) = (h4 &+ e, h5 &+ f, h6 &+ g, h7 &+ h)
                block &+= 64
            }
            state = (h0, h1, h2, h3, h4, h5, h6, h7)
        }
    }
}
