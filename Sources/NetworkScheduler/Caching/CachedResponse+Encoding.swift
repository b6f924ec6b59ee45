import Foundation

// A stored answer as one file: `NSC2`, the lengths of its description and body and their
// FNV-1a checksum (little-endian), then the description (JSON) and the body. A file cut short,
// grown or flipped anywhere fails its lengths or its checksum and is read as no answer.
extension CachedResponse {
    /// `NSC1` kept the fields one value per lowercased name; such a file is read as no answer.
    private static let magic = Array("NSC2".utf8)
    private static let prefixLength = 4 + 4 + 8 + 8

    /// What the file says besides the body. The request's identity is there as its digest only.
    private struct Description: Codable {
        var method: String
        var url: String
        var identityDigest: String?
        var responseURL: URL
        var statusCode: Int
        /// The fields in order, each as `[name, value]`.
        var fields: [[String]]
        var requested: Date
        var received: Date
        var varied: [String: String?]
    }

    /// The file's bytes.
    func encoded() -> Data? {
        let description = Description(method: key.method, url: key.url, identityDigest: key.identityDigest,
                                      responseURL: url, statusCode: statusCode, fields: fields.map { [$0.name, $0.value] },
                                      requested: requested, received: received, varied: varied)
        guard let meta = try? JSONEncoder().encode(description) else { return nil }
        var file = Data(capacity: Self.prefixLength + meta.count + body.count)
        file.append(contentsOf: Self.magic)
        withUnsafeBytes(of: UInt32(meta.count).littleEndian) { file.append(contentsOf: $0) }
        withUnsafeBytes(of: UInt64(body.count).littleEndian) { file.append(contentsOf: $0) }
        withUnsafeBytes(of: Checksum.fnv1a(body, continuing: Checksum.fnv1a(meta)).littleEndian) { file.append(contentsOf: $0) }
        file.append(meta)
        file.append(body)
        return file
    }

    /// The answer in `file`, if it is whole and is `key`'s; nil otherwise.
    static func decoded(_ file: Data, for key: CacheKey) -> CachedResponse? {
        guard file.count >= prefixLength, file.prefix(4).elementsEqual(magic) else { return nil }
        let metaLength = Int(integer(UInt32.self, in: file, at: 4))
        let bodyLength = integer(UInt64.self, in: file, at: 8)
        guard bodyLength <= UInt64(Int.max - prefixLength - metaLength),
              file.count == prefixLength + metaLength + Int(bodyLength) else { return nil }
        let contents = file.dropFirst(prefixLength)
        guard Checksum.fnv1a(contents) == integer(UInt64.self, in: file, at: 16) else { return nil }
        let meta = contents.prefix(metaLength)
        guard let description = try? JSONDecoder().decode(Description.self, from: Data(meta)),
              description.fields.allSatisfy({ $0.count == 2 }),
              description.method == key.method, description.url == key.url,
              description.identityDigest == key.identityDigest else { return nil }
        return CachedResponse(key: key, url: description.responseURL, statusCode: description.statusCode,
                              fields: HeaderFields(description.fields.map { (name: $0[0], value: $0[1]) }), body: Data(contents.dropFirst(metaLength)),
                              requested: description.requested, received: description.received, varied: description.varied)
    }

    private static func integer<T: FixedWidthInteger>(_ type: T.Type, in data: Data, at offset: Int) -> T {
        var value: T = 0
        let start = data.startIndex + offset
        for index in 0..<MemoryLayout<T>.size { value |= T(data[start + index]) << (8 * index) }
        return value
    }
}
