import Testing
@testable import NetworkScheduler

/// The cache's digest against FIPS 180-4's examples, across the padding's block boundary.
@Suite struct SHA256Tests {
    @Test func digestsMatchTheStandardsExamples() {
        #expect(SHA256.hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256.hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SHA256.hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")
            == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(SHA256.hex(String(repeating: "a", count: 1_000_000))
            == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test func aDigestFedInChunksOfAnySizeIsTheWholeOnes() {
        let bytes = (0..<200_003).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 9) }
        let whole = SHA256.hex(bytes)
        for sizes in [[1], [63, 1], [64], [65, 3], [1_000], [70_000, 1]] {
            var hasher = SHA256()
            var offset = 0
            var turn = 0
            while offset < bytes.count {
                let size = min(sizes[turn % sizes.count], bytes.count - offset)
                hasher.update(bytes[offset..<offset + size])
                offset += size
                turn += 1
            }
            #expect(hasher.hex() == whole, "chunks of \(sizes)")
        }
    }
}
