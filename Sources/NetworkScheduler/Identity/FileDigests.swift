import Foundation

/// The content digests of the files bodies were read from, by the file's stamp (path, size,
/// modification time, file number): a file sent again unchanged is not read again, and two
/// sends of one file at once (a double tap) read it once, the second waiting for the first's
/// digest, so that both are matched as soon as it is known. A file rewritten in place gets a new
/// stamp, and so a new digest; one rewritten with the same size within its file system's
/// resolution of times is the one case it cannot tell (the attempt's own check of the file
/// cannot either).
final class FileDigests: Sendable {
    static let shared = FileDigests()

    /// One digest, made by the first send that asked for it.
    private final class Entry: @unchecked Sendable {
        // Safety: `digest` is written once, under `condition`, and read under it.
        private let condition = NSCondition()
        private var digest: Result<Data, ServiceError>?

        func wait() -> Result<Data, ServiceError> {
            condition.lock()
            defer { condition.unlock() }
            while digest == nil { condition.wait() }
            return digest!
        }

        func fulfil(_ result: Result<Data, ServiceError>) {
            condition.lock()
            digest = result
            condition.broadcast()
            condition.unlock()
        }
    }

    /// The most stamps kept: uploads of the same few files are what repeats.
    private static let capacity = 64
    private let entries = Locked<[Data: Entry]>([:])

    /// The SHA-256 of the content of the file at `url`, whose stamp is `stamp`.
    func digest(ofFileAt url: URL, stamp: Data) throws(ServiceError) -> Data {
        let (entry, isFirst) = entries.withLock { entries -> (Entry, Bool) in
            if let entry = entries[stamp] { return (entry, false) }
            if entries.count >= Self.capacity { entries.removeAll() }
            let entry = Entry()
            entries[stamp] = entry
            return (entry, true)
        }
        if isFirst {
            let result = Result { () throws(ServiceError) in try RequestBody.digest(ofFileAt: url) }
            // A failure is not kept: the file may be readable next time.
            if case .failure = result { entries.withLock { $0[stamp] = nil } }
            entry.fulfil(result)
        }
        return try entry.wait().get()
    }
}
