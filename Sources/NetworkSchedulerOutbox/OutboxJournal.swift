import Foundation
import NetworkScheduler
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An append-only file of records, each written whole to disk (`fsync`) before ``append(_:)``
/// returns, and each checked when read back: what a durable outbox keeps its writes in.
///
/// A record is `NSJ1`, its payload's length and FNV-1a 64 checksum (little-endian), then the
/// payload. Reading never trusts the file: a record cut short by a crash, a length that points
/// past the end or past ``maximumRecordSize``, or a checksum that does not match (a bit flip) is
/// reported as damage, and reading goes on from the next record's mark, so one bad record
/// never hides the ones after it and is never read as something else.
///
/// One journal object writes a file at a time in a process: opening a file another has open
/// fails. Two processes must not share one.
final class OutboxJournal: Sendable {
    /// What reading a journal found.
    struct Contents: Equatable {
        /// The payloads of the whole records, in the order they were appended.
        var records: [Data]
        /// The byte ranges of the file that held no whole record: torn or corrupted.
        var damaged: [Range<Int>]
    }

    /// The most bytes one record's payload may have.
    static let maximumRecordSize = 16 << 20
    private static let mark = Data("NSJ1".utf8)
    private static let headerSize = 16

    /// How a journal makes what it wrote durable: `fsync`, unless a test makes it fail.
    struct Synchronizer: Sendable {
        let synchronize: @Sendable (FileHandle) throws -> Void

        static let disk = Synchronizer { try $0.synchronize() }
    }

    let file: URL
    /// The file as ``open`` names it, its folders' links resolved.
    private let claimedPath: String
    /// The file open for appending, until closed; every use of it is under this lock.
    private let handle: Locked<FileHandle?>
    private let synchronizer: Synchronizer

    /// The files a journal of this process has open.
    private static let open = Locked(Set<String>())

    /// The journal at `file`, made if it is not there; its folder must exist.
    init(file: URL, synchronizer: Synchronizer = .disk) throws(ServiceError) {
        let path = file.claimablePath
        guard Self.open.withLock({ $0.insert(path).inserted }) else {
            throw .invalidRequest(reason: "\(file.lastPathComponent) is open already in this process")
        }
        self.file = file
        claimedPath = path
        self.synchronizer = synchronizer
        do {
            handle = Locked(try Self.openForAppending(file))
        } catch {
            Self.open.withLock { _ = $0.remove(path) }
            throw error
        }
    }

    deinit {
        close()
    }

    /// Closes the file: appending fails from now on, and another journal may open it.
    func close() {
        let closed = handle.withLock { handle in
            defer { handle = nil }
            return handle
        }
        guard let closed else { return }
        try? closed.close()
        Self.open.withLock { _ = $0.remove(claimedPath) }
    }

    /// Appends `payload` as one record and, unless `synchronize` is false, waits until the disk
    /// has it (a record written without it survives the process being killed, not the machine
    /// losing power); then runs `then`, still before any other append or compaction, so that
    /// what it records in memory and what the journal holds change together.
    func append(_ payload: Data, synchronize: Bool = true, then: () -> Void = {}) throws(ServiceError) {
        try append(payload, synchronize: synchronize, admitting: { true }, then: then)
    }

    /// ``append(_:synchronize:then:)``, with `admits` run under the journal's lock before the
    /// record is written, which may refuse it (throw) or find it needless (return false: then
    /// nothing is written and `then` does not run): what it checks cannot change until `then`
    /// has run. Returns whether the record was appended.
    ///
    /// An append that throws leaves no record: what it wrote before failing (a part of the
    /// record on a full disk, or all of it when `fsync` failed) is cut off again, so that a
    /// write the app was told failed is never replayed. Should even that fail, the journal
    /// closes: nothing more is appended after a record whose fate is unknown.
    @discardableResult
    func append(_ payload: Data, synchronize: Bool = true, admitting admits: () throws(ServiceError) -> Bool,
                then: () -> Void) throws(ServiceError) -> Bool {
        guard payload.count <= Self.maximumRecordSize else {
            throw .invalidRequest(reason: "a journal record of \(payload.count) bytes is over the \(Self.maximumRecordSize) allowed")
        }
        let record = Self.encode(payload)
        let written = handle.withLock { handle in
            Result { () throws(ServiceError) in
                guard let open = handle else { throw .invalidRequest(reason: "\(file.lastPathComponent) is closed") }
                guard try admits() else { return false }
                let end: UInt64
                do {
                    end = try open.seekToEnd()
                } catch {
                    throw Self.cannotWrite(file, error)
                }
                do {
                    try open.write(contentsOf: record)
                    if synchronize { try synchronizer.synchronize(open) }
                } catch {
                    if (try? open.truncate(atOffset: end)) == nil {
                        try? open.close()
                        handle = nil
                        Self.open.withLock { _ = $0.remove(claimedPath) }
                    }
                    throw Self.cannotWrite(file, error)
                }
                then()
                return true
            }
        }
        return try written.get()
    }

    /// Reads the whole file back.
    func read() throws(ServiceError) -> Contents {
        let data = handle.withLock { _ in Result { try Data(contentsOf: file) } }
        do {
            return Self.decode(try data.get())
        } catch {
            throw Self.cannotWrite(file, error)
        }
    }

    /// Replaces the journal with the records `keeping` returns, in one step: a crash leaves the
    /// old journal or the new one, never a mix. `keeping` runs before any other append.
    func compact(keeping: () throws(ServiceError) -> [Data]) throws(ServiceError) {
        let fresh = file.appendingPathExtension("compacting")
        let compacted = handle.withLock { handle in
            Result { () throws(ServiceError) in
                guard handle != nil else { throw .invalidRequest(reason: "\(file.lastPathComponent) is closed") }
                let records = try keeping()
                do {
                    try records.reduce(into: Data()) { $0.append(Self.encode($1)) }.write(to: fresh)
                    let written = try FileHandle(forWritingTo: fresh)
                    defer { try? written.close() }
                    try synchronizer.synchronize(written)
                    guard rename(fresh.path, file.path) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
                    Self.synchronizeFolder(of: file)
                    try? handle?.close()
                    handle = try Self.openForAppending(file)
                } catch {
                    try? FileManager.default.removeItem(at: fresh)
                    throw Self.cannotWrite(file, error)
                }
            }
        }
        try compacted.get()
    }

    private static func cannotWrite(_ file: URL, _ error: any Error) -> ServiceError {
        if let error = error as? ServiceError { return error }
        let underlying = (error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError
        return .cannotWriteFile(reason: "\(file.lastPathComponent): \((underlying ?? error as NSError).localizedDescription)")
    }

    // MARK: - The format

    /// `payload` as a record.
    static func encode(_ payload: Data) -> Data {
        var record = mark
        withUnsafeBytes(of: UInt32(payload.count).littleEndian) { record.append(contentsOf: $0) }
        withUnsafeBytes(of: Checksum.fnv1a(payload).littleEndian) { record.append(contentsOf: $0) }
        record.append(payload)
        return record
    }

    /// The whole records in `data`, and the ranges that hold none.
    static func decode(_ data: Data) -> Contents {
        let bytes = [UInt8](data)
        var contents = Contents(records: [], damaged: [])
        var offset = 0
        var damageStart: Int?
        while offset < bytes.count {
            if let length = record(in: bytes, at: offset) {
                if let start = damageStart {
                    contents.damaged.append(start..<offset)
                    damageStart = nil
                }
                contents.records.append(Data(bytes[(offset + headerSize)..<(offset + headerSize + length)]))
                offset += headerSize + length
            } else {
                if damageStart == nil { damageStart = offset }
                offset = nextMark(in: bytes, after: offset) ?? bytes.count
            }
        }
        if let start = damageStart { contents.damaged.append(start..<bytes.count) }
        return contents
    }

    /// The payload length of the whole, intact record at `offset`, or nil.
    private static func record(in bytes: [UInt8], at offset: Int) -> Int? {
        guard bytes.count - offset >= headerSize, bytes[offset..<(offset + 4)].elementsEqual(mark) else { return nil }
        let length = Int(integer(UInt32.self, in: bytes, at: offset + 4))
        guard length <= maximumRecordSize, bytes.count - offset - headerSize >= length else { return nil }
        let stored = integer(UInt64.self, in: bytes, at: offset + 8)
        let payload = bytes[(offset + headerSize)..<(offset + headerSize + length)]
        return Checksum.fnv1a(payload) == stored ? length : nil
    }

    private static func nextMark(in bytes: [UInt8], after offset: Int) -> Int? {
        var index = offset + 1
        while index + 4 <= bytes.count {
            if bytes[index] == mark[mark.startIndex], bytes[index..<(index + 4)].elementsEqual(mark) { return index }
            index += 1
        }
        return nil
    }

    private static func integer<T: FixedWidthInteger>(_ type: T.Type, in bytes: [UInt8], at offset: Int) -> T {
        var value: T = 0
        for index in 0..<MemoryLayout<T>.size { value |= T(bytes[offset + index]) << (8 * index) }
        return value
    }

    /// `file` open for appending, made (readable by its owner alone) if it is not there.
    private static func openForAppending(_ file: URL) throws(ServiceError) -> FileHandle {
        #if canImport(Glibc)
        let descriptor = Glibc.open(file.path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        #else
        let descriptor = Darwin.open(file.path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        #endif
        guard descriptor >= 0 else {
            throw .cannotWriteFile(reason: "\(file.lastPathComponent): \(String(cString: strerror(errno)))")
        }
        return FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
    }

    /// Makes a rename in `file`'s folder durable: the folder's own entry is written too.
    private static func synchronizeFolder(of file: URL) {
        #if canImport(Glibc)
        let folder = Glibc.open(file.deletingLastPathComponent().path, O_RDONLY | O_CLOEXEC)
        #else
        let folder = Darwin.open(file.deletingLastPathComponent().path, O_RDONLY | O_CLOEXEC)
        #endif
        guard folder >= 0 else { return }
        fsync(folder)
        #if canImport(Glibc)
        Glibc.close(folder)
        #else
        Darwin.close(folder)
        #endif
    }
}
