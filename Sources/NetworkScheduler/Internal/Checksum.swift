/// What tells a torn or flipped record from a whole one, in the outbox's journal and the
/// cache's files: not a defence against someone who writes them on purpose.
package enum Checksum {
    /// FNV-1a, 64 bits, of `bytes`, or of what came before them and `bytes` when `continuing`
    /// is the checksum of what came before.
    package static func fnv1a<Bytes: Sequence>(_ bytes: Bytes, continuing: UInt64 = 0xcbf2_9ce4_8422_2325) -> UInt64
    where Bytes.Element == UInt8 {
        bytes.reduce(continuing) { ($0 ^ UInt64($1)) &* 0x0000_0100_0000_01b3 }
    }
}
