import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One attempt of a download: its body written to `<destination>.partial` as it arrives, then
/// moved to its destination once whole.
///
/// An attempt resumes what an earlier one left (`Range`, with `If-Range` naming the version it
/// has) only when the server gave that version a validator: a strong `ETag`, or a
/// `Last-Modified` date. A server that answers the whole body (it ignores ranges, or the file
/// changed) starts the file over; one that answers another range than asked fails the attempt
/// and the partial file is removed. Never are two versions spliced.
///
/// A file that cannot be written (a folder that refuses it, a full disk) fails the attempt with
/// ``ServiceError/cannotWriteFile(reason:)`` and removes the partial file, freeing its space;
/// the destination is never touched until the body is whole.
final class FileDownload: SegmentedSink, @unchecked Sendable {
    // Safety: the mutable state is in `state`, behind its lock.

    let destination: URL
    /// The destination as ``inUse`` names it, its folders' links resolved.
    private let claimedPath: String
    private let limit: Int
    private let progress: @Sendable (TransferProgress) -> Void
    /// Told of each head the download is offered, whatever its status.
    private let onHead: (@Sendable (ResponseHead) -> Void)?
    private let state = Locked(State())

    private struct State {
        /// The bytes the partial file had when this attempt asked for the rest.
        var offset: Int64 = 0
        var handle: FileHandle?
        /// The bytes in the partial file now: where the next part starts.
        var length: Int64 = 0
        /// The whole body's length, if the server said it (a `Content-Range` of `*` does not).
        var expected: Int64?
        /// Where the part being written ends, past its last byte, if it is a part.
        var partEnd: Int64?
        /// Where the part asked for ends, past its last byte: a part that ends there may not be
        /// the body's last, when its whole length is unknown.
        var askedEnd: Int64?
        var isAccepted = false
        var isSettled = false
        /// Writing failed: what was written is not kept.
        var writeFailed = false
        /// The version of the body being written, if the server named one.
        var validator: String?
        /// The status of the last head it took.
        var status = 0
    }

    /// Destinations a download is writing to, so that two calls never write one file.
    private static let inUse = Locked(Set<String>())

    var partial: URL { destination.appendingPathExtension("partial") }
    /// The version of the body in `partial`: its validator, in a file beside it.
    private var version: URL { destination.appendingPathExtension("partial-version") }

    /// A download to `destination`, whose folder must exist; `limit` bytes at most. `onHead`
    /// is told of each head it is offered, before it decides whether to take its body.
    init(destination: URL, limit: Int, onHead: (@Sendable (ResponseHead) -> Void)? = nil,
         progress: @escaping @Sendable (TransferProgress) -> Void) throws(ServiceError) {
        guard destination.isFileURL else { throw .invalidRequest(reason: "the destination \(destination.absoluteString) is not a file URL") }
        var isDirectory: ObjCBool = false
        let folder = destination.deletingLastPathComponent()
        guard FileManager.default.fileExists(atPath: folder.path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw .invalidRequest(reason: "the destination's folder \(folder.lastPathComponent) does not exist")
        }
        if FileManager.default.fileExists(atPath: destination.path, isDirectory: &isDirectory), isDirectory.boolValue {
            throw .invalidRequest(reason: "the destination \(destination.lastPathComponent) is a folder")
        }
        let claimedPath = destination.claimablePath
        let claimed = Self.inUse.withLock { $0.insert(claimedPath).inserted }
        guard claimed else { throw .invalidRequest(reason: "another download is writing to \(destination.lastPathComponent)") }
        self.destination = destination
        self.claimedPath = claimedPath
        self.limit = limit
        self.onHead = onHead
        self.progress = progress
    }

    /// Whether it took a response's body.
    var isAccepted: Bool { state.withLock { $0.isAccepted } }

    /// The headers that ask for the rest of what an earlier attempt left, if the server named
    /// its version; none to ask for the whole body.
    func resumeHeaders() -> HeaderFields {
        guard let validator = try? String(contentsOf: version, encoding: .utf8), !validator.isEmpty,
              let size = (try? FileManager.default.attributesOfItem(atPath: partial.path)[.size] as? NSNumber)?.int64Value,
              size > 0 else { return [:] }
        state.withLock { state in
            state.offset = size
            state.validator = validator
        }
        return ["Range": "bytes=\(size)-", "If-Range": validator]
    }

    func accept(_ head: ResponseHead) throws -> Bool {
        onHead?(head)
        // An error's body stays with the transport, for its message; the partial file waits.
        guard (200..<300).contains(head.statusCode) else { return false }
        let (asked, named) = state.withLock { ($0.offset, $0.validator) }
        var start: Int64 = 0
        var expected = head.value(forHTTPHeaderField: "Content-Length").flatMap { Int64($0) }
        var partEnd: Int64?
        var validator = Self.validator(of: head)
        if head.statusCode == 206 {
            guard let range = head.value(forHTTPHeaderField: "Content-Range").flatMap(Self.contentRange), range.start == asked else {
                discardPartial()
                throw Self.refused("the server answered another range than the download asked for")
            }
            // A part of another version than the one `If-Range` named is never written after it;
            // one that names none is the version named, as `If-Range` asked.
            if asked > 0, let named {
                if let validator, validator != named {
                    discardPartial()
                    throw Self.refused("the server answered a part of another version of the file than the download has")
                }
                validator = named
            }
            start = asked
            partEnd = range.end + 1
            expected = range.total
        }
        if let expected, expected > Int64(limit) { throw ServiceError.responseTooLarge(limit: limit) }
        // The next part of the body being written: the file stays open, and what the last part
        // brought may still be on its way to it (a paced download asks for the next part as the
        // last one ends).
        let continues = state.withLock { state in
            guard head.statusCode == 206, start > 0, state.handle != nil, state.length == start,
                  state.validator == validator else { return false }
            state.expected = expected
            state.partEnd = partEnd
            state.isAccepted = true
            state.status = 206
            return true
        }
        if continues { return true }
        let handle = try open(from: start)
        try? FileManager.default.removeItem(at: version)
        if let validator { try? Data(validator.utf8).write(to: version) }
        let replaced = state.withLock { state in
            defer {
                state.handle = handle
                state.length = start
                state.expected = expected
                state.partEnd = partEnd
                state.isAccepted = true
                state.validator = validator
                state.status = head.statusCode
            }
            return state.handle
        }
        try? replaced?.close()
        progress(.received(start, of: expected))
        return true
    }

    func write(_ chunk: Data) throws {
        let (handle, length, expected) = state.withLock { state in
            state.length += Int64(chunk.count)
            return (state.handle, state.length, state.expected)
        }
        guard length <= Int64(limit) else { throw ServiceError.responseTooLarge(limit: limit) }
        do {
            try handle?.write(contentsOf: chunk)
        } catch {
            state.withLock { $0.writeFailed = true }
            throw cannotWrite(partial, error)
        }
        progress(.received(length, of: expected))
    }

    func nextSegment(size: Int64) -> HeaderFields? {
        state.withLock { state in
            if state.isAccepted {
                // A whole body (200) is done with, and so is a body whose end is reached: its
                // length, or, when the server gave none (`*`), a part shorter than asked.
                guard state.status == 206, !state.writeFailed else { return nil }
                if let expected = state.expected {
                    guard state.length < expected else { return nil }
                } else {
                    guard let askedEnd = state.askedEnd, state.length >= askedEnd else { return nil }
                }
                state.isAccepted = false
                guard state.validator != nil else {
                    // The rest cannot be asked for by its version: the whole body, in one request.
                    state.offset = 0
                    state.askedEnd = nil
                    return [:]
                }
                state.offset = state.length
            }
            state.askedEnd = state.offset + size
            var headers: HeaderFields = ["Range": "bytes=\(state.offset)-\(state.offset + size - 1)"]
            // The first segment of a new download has no version to name: whatever comes is its.
            if state.offset > 0, let validator = state.validator { headers["If-Range"] = validator }
            return headers
        }
    }

    /// Whether the body has ended at a part's end although its whole length is unknown, so that
    /// the server finds nothing at the next range (416).
    var endedWithoutLength: Bool {
        state.withLock { state in
            state.expected == nil && state.offset > 0 && state.length == state.offset && !state.isAccepted
        }
    }

    /// The attempt succeeded: the body must be whole, and then replaces the destination.
    func finish() throws(ServiceError) {
        // The whole length, or with `*` the end of the last part, which the body ended at.
        let (handle, length, expected) = state.withLock { state in
            defer { state.handle = nil }
            return (state.handle, state.length, state.expected ?? state.partEnd)
        }
        try? handle?.close()
        if let expected, length > expected {
            // More than the server said: which bytes are the body's cannot be known.
            settle(keepingPartial: false)
            throw .badServerResponse(URLError(.badServerResponse, userInfo: [
                NSLocalizedDescriptionKey: "the server sent more than the \(expected) bytes its Content-Length said"]))
        }
        if let expected, length < expected {
            // Cut short: kept, for the next attempt to resume.
            settle(keepingPartial: true)
            throw .connectionLost(URLError(.networkConnectionLost))
        }
        if handle == nil {
            // Nothing written (an empty body the transport never passed on): an empty file.
            _ = FileManager.default.createFile(atPath: partial.path, contents: nil)
        }
        // In one step, whatever was there: a reader sees the old file or the new, never half.
        guard rename(partial.path, destination.path) == 0 else {
            let reason = String(cString: strerror(errno))
            settle(keepingPartial: false)
            throw .cannotWriteFile(reason: "\(destination.lastPathComponent): \(reason)")
        }
        settle(keepingPartial: false)
    }

    /// The attempt failed or was cancelled: its partial file is kept for the next attempt if
    /// the server named its version, and removed otherwise.
    func abandon() {
        let (handle, writeFailed) = state.withLock { state in
            defer { state.handle = nil }
            return (state.handle, state.writeFailed)
        }
        try? handle?.close()
        let resumable = !writeFailed && FileManager.default.fileExists(atPath: version.path)
        settle(keepingPartial: resumable)
    }

    private func settle(keepingPartial: Bool) {
        let isFirst = state.withLock { state in
            defer { state.isSettled = true }
            return !state.isSettled
        }
        guard isFirst else { return }
        if !keepingPartial { discardPartial() }
        Self.inUse.withLock { _ = $0.remove(claimedPath) }
    }

    private func discardPartial() {
        try? FileManager.default.removeItem(at: partial)
        try? FileManager.default.removeItem(at: version)
    }

    /// The partial file, cut to `offset` bytes and open for writing after them.
    private func open(from offset: Int64) throws -> FileHandle {
        let descriptor = Self.openForWriting(partial.path)
        guard descriptor >= 0 else {
            let reason = String(cString: strerror(errno))
            state.withLock { $0.writeFailed = true }
            throw ServiceError.cannotWriteFile(reason: "\(partial.lastPathComponent): \(reason)")
        }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        do {
            // Shorter than asked for (removed meanwhile): resuming would splice in zeros.
            let size = try handle.seekToEnd()
            guard size >= UInt64(offset) else {
                discardPartial()
                throw ServiceError.connectionLost(URLError(.networkConnectionLost))
            }
            // Only when needed: ext4 flushes a file truncated while open as it is closed
            // (its auto_da_alloc), which cost a 1 GiB download a tenth of a second.
            if size > UInt64(offset) {
                try handle.truncate(atOffset: UInt64(offset))
                try handle.seekToEnd()
            }
            return handle
        } catch let error as ServiceError {
            throw error
        } catch {
            state.withLock { $0.writeFailed = true }
            throw cannotWrite(partial, error)
        }
    }

    /// Opens `path` for writing, made if it is not there, kept as it is if it is.
    private static func openForWriting(_ path: String) -> Int32 {
        #if canImport(Glibc)
        Glibc.open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
        #else
        Darwin.open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
        #endif
    }

    /// Why `file` could not be written, naming it and nothing above it.
    private func cannotWrite(_ file: URL, _ error: any Error) -> ServiceError {
        let underlying = (error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError
        let reason = (underlying ?? error as NSError).localizedDescription
        return .cannotWriteFile(reason: "\(file.lastPathComponent): \(reason)")
    }

    /// A strong `ETag`, or else a `Last-Modified` date: what `If-Range` may name.
    static func validator(of head: ResponseHead) -> String? {
        if let tag = head.value(forHTTPHeaderField: "ETag"), !tag.hasPrefix("W/"), HTTPSyntax.isFieldValue(tag) { return tag }
        if let date = head.value(forHTTPHeaderField: "Last-Modified"), HTTPSyntax.isFieldValue(date) { return date }
        return nil
    }

    /// An answer the download cannot write, as an error.
    private static func refused(_ reason: String) -> ServiceError {
        .badServerResponse(URLError(.badServerResponse, userInfo: [NSLocalizedDescriptionKey: reason]))
    }

    /// `bytes START-END/TOTAL` (TOTAL may be `*`).
    static func contentRange(_ value: String) -> (start: Int64, end: Int64, total: Int64?)? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        guard trimmed.lowercased().hasPrefix("bytes ") else { return nil }
        let spec = trimmed.dropFirst("bytes ".count).split(separator: "/", maxSplits: 1)
        guard spec.count == 2 else { return nil }
        let bounds = spec[0].split(separator: "-", maxSplits: 1)
        guard bounds.count == 2, let start = Int64(bounds[0]), let end = Int64(bounds[1]), start >= 0, end >= start else { return nil }
        return (start, end, spec[1] == "*" ? nil : Int64(spec[1]))
    }
}
