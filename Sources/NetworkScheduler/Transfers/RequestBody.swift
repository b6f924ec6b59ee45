import Foundation

/// A request's body as the scheduler keeps it from its send to each attempt.
enum RequestBody: Sendable, Equatable {
    /// In memory, sent as it is.
    case data(Data)
    /// Read from a file as each attempt sends it. `identity` is its content's digest, for the
    /// request's identity; `stamp` names the file as it was when the request was made (path,
    /// size, modification time), to tell that it changed since; `owner` removes a file the
    /// scheduler took over once no request holds it.
    case file(URL, identity: Data, stamp: Data, owner: TemporaryFile?)
    /// A form with files, written to a temporary file as each attempt starts. `identity` is
    /// its fields and its files' digests.
    case multipart(MultipartForm, identity: Data)

    /// What the request's identity counts of it: the bytes in memory, or for a body read from
    /// disk the SHA-256 of each file's content, so that equal uploads are one call wherever
    /// their files are (an upload spooled to a fresh temporary file per call included), and
    /// files of equal size and time but other content never are.
    var identity: Data {
        switch self {
        case .data(let data): data
        case .file(_, let identity, _, _), .multipart(_, let identity): identity
        }
    }

    /// Why an attempt of it failed, if it is that its file changed after the request was made
    /// (cut short, it leaves a transport waiting for the bytes it promised, or failing in its
    /// own words). Nil for a body in memory, or a file as it was.
    var fileChange: ServiceError? {
        guard case .file(let url, _, let stamp, _) = self, (try? Self.stamp(ofFileAt: url)) != stamp else { return nil }
        return .invalidRequest(reason: "the body file \(url.lastPathComponent) changed after the request was made")
    }

    /// The bytes in memory, if the body is.
    var data: Data? {
        if case .data(let data) = self { return data }
        return nil
    }

    /// What one attempt sends: bytes in memory, or a file it streams.
    struct Staged {
        var data: Data?
        var file: TransportRequest.BodyFile?
        /// A file written for this attempt alone, removed when it ends.
        var temporaryFile: URL?
    }

    /// The body as an attempt starting now sends it: a file is measured again (it is sent as it
    /// is now), and a form with files is written to a temporary file.
    func staged() throws(ServiceError) -> Staged {
        switch self {
        case .data(let data):
            return Staged(data: data)
        case .file(let url, _, _, _):
            return Staged(file: TransportRequest.BodyFile(url: url, length: try Self.regularFile(at: url).size))
        case .multipart(let form, _):
            let url = FileManager.default.temporaryDirectory
                .appendingPathComponent("NetworkScheduler-\(UUID().uuidString).multipart")
            let length = try form.write(to: url)
            return Staged(file: TransportRequest.BodyFile(url: url, length: length), temporaryFile: url)
        }
    }

    /// A body read from the file at `url`, which must be a regular file (not a directory, nor a
    /// device that never ends, such as `/dev/zero`).
    static func file(at url: URL, owner: TemporaryFile? = nil) throws(ServiceError) -> RequestBody {
        let stamp = try stamp(ofFileAt: url)
        let digest = try FileDigests.shared.digest(ofFileAt: url, stamp: stamp)
        return .file(url, identity: Data("file\u{0}".utf8) + digest, stamp: stamp, owner: owner)
    }

    /// A form's body: in memory if it has no files.
    static func multipart(_ form: MultipartForm) throws(ServiceError) -> RequestBody {
        if let invalid = form.invalid { throw .invalidRequest(reason: invalid) }
        guard form.hasFiles else { return .data(form.encodedInMemory()) }
        var identity = Data()
        for part in form.parts {
            identity.append(part.head)
            switch part.content {
            case .data(let data): identity.append(data)
            case .file(let url): identity.append(try FileDigests.shared.digest(ofFileAt: url, stamp: try Self.stamp(ofFileAt: url)))
            }
        }
        return .multipart(form, identity: identity)
    }

    /// The path, size, modification time and file number of a regular file.
    static func stamp(ofFileAt url: URL) throws(ServiceError) -> Data {
        let file = try regularFile(at: url)
        return Data("\(url.path)\u{0}\(file.size)\u{0}\(file.modified?.timeIntervalSince1970 ?? 0)\u{0}\(file.number)".utf8)
    }

    /// The SHA-256 of a regular file's content, read a chunk at a time.
    static func digest(ofFileAt url: URL) throws(ServiceError) -> Data {
        _ = try regularFile(at: url)
        var hasher = SHA256()
        do {
            let input = try FileHandle(forReadingFrom: url)
            defer { try? input.close() }
            while let chunk = try input.read(upToCount: MultipartForm.chunkSize), !chunk.isEmpty { hasher.update(chunk) }
        } catch {
            throw .invalidRequest(reason: "the body file \(url.lastPathComponent) cannot be read")
        }
        return Data(hasher.finalize())
    }

    /// The size and modification time of the regular file at `url`.
    static func regularFile(at url: URL) throws(ServiceError) -> (size: Int64, modified: Date?, number: UInt64) {
        guard url.isFileURL else { throw .invalidRequest(reason: "the body file \(url.absoluteString) is not a file URL") }
        let attributes: [FileAttributeKey: Any]
        do {
            attributes = try FileManager.default.attributesOfItem(atPath: url.path)
        } catch {
            throw .invalidRequest(reason: "the body file \(url.lastPathComponent) cannot be read")
        }
        guard attributes[.type] as? FileAttributeType == .typeRegular,
              let size = (attributes[.size] as? NSNumber)?.int64Value else {
            throw .invalidRequest(reason: "the body file \(url.lastPathComponent) is not a regular file")
        }
        return (size, attributes[.modificationDate] as? Date, (attributes[.systemFileNumber] as? NSNumber)?.uint64Value ?? 0)
    }
}

extension MultipartForm {
    /// The whole body, for a form without files.
    func encodedInMemory() -> Data {
        var body = Data()
        for part in parts {
            body.append(part.head)
            if case .data(let data) = part.content { body.append(data) }
            body.append(Self.lineBreak)
        }
        body.append(closing)
        return body
    }

    /// Writes the whole body to a new file at `url`, a file part at a time in chunks, and
    /// returns its length. Nothing is left at `url` if it fails.
    func write(to url: URL) throws(ServiceError) -> Int64 {
        guard FileManager.default.createFile(atPath: url.path, contents: nil),
              let output = try? FileHandle(forWritingTo: url) else {
            throw .underlying(ServiceError.UnderlyingError(CocoaError(.fileWriteUnknown)))
        }
        var isWritten = false
        defer {
            try? output.close()
            if !isWritten { try? FileManager.default.removeItem(at: url) }
        }
        var length: Int64 = 0
        do {
            func write(_ data: Data) throws {
                try output.write(contentsOf: data)
                length += Int64(data.count)
            }
            for part in parts {
                try write(part.head)
                switch part.content {
                case .data(let data):
                    try write(data)
                case .file(let file):
                    _ = try RequestBody.regularFile(at: file)
                    let input = try FileHandle(forReadingFrom: file)
                    defer { try? input.close() }
                    while let chunk = try input.read(upToCount: Self.chunkSize), !chunk.isEmpty { try write(chunk) }
                }
                try write(Self.lineBreak)
            }
            try write(closing)
        } catch let error as ServiceError {
            throw error
        } catch {
            throw .underlying(ServiceError.UnderlyingError(error))
        }
        isWritten = true
        return length
    }

    static let lineBreak = Data("\r\n".utf8)
    /// The bytes of a file read at once while a form is written.
    static let chunkSize = 1 << 20
}
