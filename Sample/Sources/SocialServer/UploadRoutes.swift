import Foundation
import Hummingbird
import NIOCore

/// What `POST /uploads` answers: the body's length and checksum, as the server read them.
struct UploadReceiptRecord: Codable, Sendable {
    let bytes: Int
    let checksum: String
}

/// What `POST /me/avatar` answers: the form's fields, and its files' names, types and checksums.
struct FormReceiptRecord: Codable, Sendable {
    struct File: Codable, Sendable {
        let field: String
        let filename: String?
        let contentType: String?
        let bytes: Int
        let checksum: String
    }

    let fields: [String: String]
    let files: [File]
}

extension SocialRoutes {
    /// The most bytes `POST /me/avatar` reads.
    static let largestForm = 64 * 1_024 * 1_024

    func addUploadRoutes(to router: Router<Context>) {
        router.post("/uploads") { request, context in
            await handle(.upload, request, context) { _ in
                let pause = faults[.upload]?.readPauseMilliseconds
                var checksum = Checksum()
                var sincePause = 0
                for try await buffer in request.body {
                    buffer.withUnsafeReadableBytes { checksum.add($0) }
                    sincePause += buffer.readableBytes
                    if let pause, sincePause >= 64 * 1_024 {
                        sincePause = 0
                        try await Task.sleep(for: .milliseconds(pause))
                    }
                }
                return Reply.json(UploadReceiptRecord(bytes: checksum.count, checksum: checksum.hex))
            }
        }
        router.post("/me/avatar") { request, context in
            await handle(.avatar, request, context) { _ in
                let contentType = request.headers[.contentType] ?? ""
                guard let boundary = Self.boundary(of: contentType) else {
                    return Reply.message("send a multipart/form-data body with a boundary", status: .badRequest)
                }
                let body = try await request.body.collect(upTo: Self.largestForm)
                guard let receipt = Self.formReceipt(of: Data(body.readableBytesView), boundary: boundary) else {
                    return Reply.message("the multipart body could not be read", status: .badRequest)
                }
                return Reply.json(receipt)
            }
        }
    }

    /// The `boundary` parameter of a `multipart/form-data` content type.
    static func boundary(of contentType: String) -> String? {
        let parts = contentType.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
        guard parts.first?.lowercased() == "multipart/form-data" else { return nil }
        for parameter in parts.dropFirst() where parameter.lowercased().hasPrefix("boundary=") {
            return String(parameter.dropFirst("boundary=".count)).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        }
        return nil
    }

    /// Reads a form: each part between delimiter lines, its headers, then its content.
    static func formReceipt(of body: Data, boundary: String) -> FormReceiptRecord? {
        let delimiter = Data("--\(boundary)".utf8)
        let lineBreak = Data("\r\n".utf8)
        let headerEnd = Data("\r\n\r\n".utf8)
        var fields: [String: String] = [:]
        var files: [FormReceiptRecord.File] = []
        guard var cursor = body.range(of: delimiter)?.upperBound else { return nil }
        while true {
            // After a delimiter: "--" closes the form, a line break opens a part.
            if body[cursor...].starts(with: Data("--".utf8)) { return FormReceiptRecord(fields: fields, files: files) }
            guard body[cursor...].starts(with: lineBreak),
                  let headEnd = body.range(of: headerEnd, in: cursor..<body.endIndex),
                  let next = body.range(of: lineBreak + delimiter, in: headEnd.upperBound..<body.endIndex) else { return nil }
            let head = String(decoding: body[(cursor + 2)..<headEnd.lowerBound], as: UTF8.self)
            let content = body[headEnd.upperBound..<next.lowerBound]
            let headers = head.components(separatedBy: "\r\n")
            let disposition = headers.first { $0.lowercased().hasPrefix("content-disposition:") } ?? ""
            let type = headers.first { $0.lowercased().hasPrefix("content-type:") }
                .map { String($0.dropFirst("content-type:".count)).trimmingCharacters(in: .whitespaces) }
            guard let name = parameter("name", of: disposition) else { return nil }
            if let filename = parameter("filename", of: disposition) ?? (type == nil ? nil : "") {
                var checksum = Checksum()
                checksum.add(Data(content))
                files.append(.init(field: name, filename: filename.isEmpty ? nil : filename, contentType: type,
                                   bytes: checksum.count, checksum: checksum.hex))
            } else {
                fields[name] = String(decoding: content, as: UTF8.self)
            }
            cursor = next.upperBound
        }
    }

    /// A quoted parameter of a `Content-Disposition` line, as it was sent (escapes kept).
    private static func parameter(_ name: String, of line: String) -> String? {
        guard let start = line.range(of: "; \(name)=\"") else { return nil }
        let rest = line[start.upperBound...]
        guard let end = rest.firstIndex(of: "\"") else { return nil }
        return String(rest[..<end])
    }
}

/// FNV-1a, 64 bits, over the bytes seen: what client and server compare an upload by.
public struct Checksum: Sendable {
    private var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    /// The bytes seen.
    public private(set) var count = 0

    public init() {}

    /// Adds `bytes` to the sum: through their buffer, cheap even in a debug build, where the
    /// server runs in the tests beside uploads of tens of megabytes.
    public mutating func add(_ bytes: UnsafeRawBufferPointer) {
        var hash = self.hash
        for byte in bytes {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
        self.hash = hash
        count += bytes.count
    }

    /// Adds `data` to the sum.
    public mutating func add(_ data: some DataProtocol) {
        for region in data.regions { region.withUnsafeBytes { add($0) } }
    }

    /// The sum, as 16 hexadecimal digits.
    public var hex: String {
        let digits = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
