import NIOConcurrencyHelpers

/// A gzip stream of many zeros, made without zlib: one literal zero, then back-references of
/// 258 bytes at distance 1, in one deflate block with the fixed Huffman codes (RFC 1951), so
/// that every 258 bytes cost 13 bits on the wire. 64 MiB of zeros is 410 KB.
enum GzipBomb {
    private static let cache = NIOLockedValueBox<[Int: [UInt8]]>([:])

    /// `count` zeros, gzipped; made once per size.
    static func zeros(_ count: Int) -> [UInt8] {
        if let made = cache.withLockedValue({ $0[count] }) { return made }
        let made = make(count)
        cache.withLockedValue { $0[count] = made }
        return made
    }

    private static func make(_ count: Int) -> [UInt8] {
        precondition(count >= 1)
        var bits = BitWriter()
        bits.write(1, count: 1) // the last block
        bits.write(1, count: 2) // fixed Huffman codes
        bits.writeCode(0b0011_0000, length: 8) // literal 0
        var left = count - 1
        while left > 0 {
            let length = min(left, 258)
            if length < 3 {
                for _ in 0..<length { bits.writeCode(0b0011_0000, length: 8) }
            } else {
                writeLength(length, into: &bits)
                bits.writeCode(0, length: 5) // distance code 0: distance 1
            }
            left -= length
        }
        bits.writeCode(0, length: 7) // end of block
        var gzip: [UInt8] = [0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 0xFF]
        gzip += bits.finish()
        // A bomb is read whole by no client that survives it: past 16 MiB its checksum is left
        // at zero rather than computed byte by byte.
        gzip += littleEndian(count <= 16 * 1_024 * 1_024 ? crc32OfZeros(count) : 0)
        gzip += littleEndian(UInt32(truncatingIfNeeded: count))
        return gzip
    }

    /// A match length of 3 to 258 with its fixed code and extra bits.
    private static func writeLength(_ length: Int, into bits: inout BitWriter) {
        if length == 258 {
            bits.writeCode(0b1100_0101, length: 8) // code 285
            return
        }
        let bases = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227]
        let extras = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5]
        let index = bases.lastIndex { $0 <= length }!
        let code = 257 + index
        // Codes 257...279 are 7 bits from 0; 280...287 are 8 bits from 0b1100_0000.
        if code <= 279 {
            bits.writeCode(code - 256, length: 7)
        } else {
            bits.writeCode(0b1100_0000 + code - 280, length: 8)
        }
        bits.write(length - bases[index], count: extras[index])
    }

    private static func crc32OfZeros(_ count: Int) -> UInt32 {
        var table = [UInt32](repeating: 0, count: 256)
        for index in 0..<256 {
            var value = UInt32(index)
            for _ in 0..<8 { value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
            table[index] = value
        }
        var crc: UInt32 = 0xFFFF_FFFF
        for _ in 0..<count { crc = table[Int(crc & 0xFF)] ^ (crc >> 8) }
        return crc ^ 0xFFFF_FFFF
    }

    private static func littleEndian(_ value: UInt32) -> [UInt8] {
        (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
    }

    /// Bits packed least significant first, as deflate stores them, gathered in a word.
    private struct BitWriter {
        private(set) var bytes: [UInt8] = []
        private var pending: UInt64 = 0
        private var pendingCount = 0

        /// `count` bits of `value`, least significant first.
        mutating func write(_ value: Int, count: Int) {
            guard count > 0 else { return }
            pending |= UInt64(value & ((1 << count) - 1)) << pendingCount
            pendingCount += count
            while pendingCount >= 8 {
                bytes.append(UInt8(truncatingIfNeeded: pending))
                pending >>= 8
                pendingCount -= 8
            }
        }

        /// A Huffman code, most significant bit first.
        mutating func writeCode(_ code: Int, length: Int) {
            var reversed = 0
            for bit in 0..<length where code & (1 << bit) != 0 { reversed |= 1 << (length - 1 - bit) }
            write(reversed, count: length)
        }

        /// The bytes, the last one padded with zeros.
        mutating func finish() -> [UInt8] {
            if pendingCount > 0 { bytes.append(UInt8(truncatingIfNeeded: pending)) }
            pending = 0
            pendingCount = 0
            return bytes
        }
    }
}
