import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The answers a cache keeps in a folder, bounded by bytes, least recently used first out.
///
/// Each answer is one file, `<SHA-256 of its URL>/<SHA-256 of its method and user>`, so that
/// no URL, token or cookie shows in a name and an invalidation removes a URL's folder. A file
/// is written whole under a temporary name and renamed over the old one, so that a crash
/// leaves the old answer or the new one; a file that is cut short or damaged anyway fails its
/// checksum, is dropped, and is read as no answer. Writes leave the caller's path: they run on
/// the store's queue, which also orders invalidations after the writes before them. One store
/// serves a folder in a process, whatever the number of caches opened on it.
final class DiskCacheStore: Sendable {
    let directory: URL
    let capacity: Int

    private struct Index {
        /// Each file by `folder/file`, with its size and last use.
        var files: [String: (size: Int, lastUse: UInt64)] = [:]
        var bytes = 0
        var uses: UInt64 = 0

        mutating func touch(_ path: String, size: Int? = nil) {
            uses += 1
            let old = files[path]
            let size = size ?? old?.size ?? 0
            bytes += size - (old?.size ?? 0)
            files[path] = (size, uses)
        }

        mutating func drop(_ path: String) {
            if let old = files.removeValue(forKey: path) { bytes -= old.size }
        }
    }

    private let index: Locked<Index>
    private let queue = DispatchQueue(label: "NetworkScheduler disk cache")
    private static let opened = Locked<[String: WeakStore]>([:])

    private struct WeakStore {
        weak var store: DiskCacheStore?
    }

    /// The store of `directory`, made (readable by its owner alone) if it is not there; the
    /// one already open in this process if there is one, with its capacity.
    static func at(_ directory: URL, capacity: Int) throws(ServiceError) -> DiskCacheStore {
        let directory = directory.standardizedFileURL
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw .cannotWriteFile(reason: "the cache's folder \(directory.path): \(error.localizedDescription)")
        }
        return opened.withLock { opened in
            if let store = opened[directory.path]?.store { return store }
            let store = DiskCacheStore(directory: directory, capacity: capacity)
            opened[directory.path] = WeakStore(store: store)
            return store
        }
    }

    private init(directory: URL, capacity: Int) {
        self.directory = directory
        self.capacity = max(0, capacity)
        index = Locked(Self.scan(directory))
    }

    /// The files already there, oldest first, and no temporary file a crash left behind.
    private static func scan(_ directory: URL) -> Index {
        let manager = FileManager.default
        var found: [(path: String, size: Int, modified: Date)] = []
        for name in (try? manager.contentsOfDirectory(atPath: directory.path)) ?? [] {
            let folder = directory.appendingPathComponent(name)
            if name.hasPrefix(".") {
                try? manager.removeItem(at: folder)
                continue
            }
            for file in (try? manager.contentsOfDirectory(atPath: folder.path)) ?? [] {
                let attributes = try? manager.attributesOfItem(atPath: folder.appendingPathComponent(file).path)
                found.append((name + "/" + file, (attributes?[.size] as? NSNumber)?.intValue ?? 0,
                              attributes?[.modificationDate] as? Date ?? .distantPast))
            }
        }
        var index = Index()
        for file in found.sorted(by: { $0.modified < $1.modified }) { index.touch(file.path, size: file.size) }
        return index
    }

    private func path(of key: CacheKey) -> String { key.folderName + "/" + key.fileName }

    /// The answer stored for `key`, if its file is whole; a damaged file is removed.
    func response(for key: CacheKey) -> CachedResponse? {
        let path = path(of: key)
        guard index.withLock({ $0.files[path] != nil }),
              let file = try? Data(contentsOf: directory.appendingPathComponent(path)) else { return nil }
        guard let response = CachedResponse.decoded(file, for: key) else {
            queue.async { [self] in removeFile(path) }
            return nil
        }
        index.withLock { $0.touch(path) }
        return response
    }

    /// Writes `response` in the background, in place of its key's file, then trims the store
    /// to its capacity. One larger than an eighth of the capacity is not written.
    func store(_ response: CachedResponse) {
        guard response.cost <= capacity / 8 else { return }
        queue.async { [self] in write(response) }
    }

    /// Removes `key`'s answer, after the writes asked before.
    func remove(_ key: CacheKey) {
        let path = path(of: key)
        queue.sync { removeFile(path) }
    }

    /// Removes every answer for `url`, after the writes asked before.
    func removeAll(for url: String) {
        queue.sync {
            let folder = CacheKey.folderName(of: url)
            try? FileManager.default.removeItem(at: directory.appendingPathComponent(folder))
            index.withLock { index in
                for path in index.files.keys where path.hasPrefix(folder + "/") { index.drop(path) }
            }
        }
    }

    /// Removes every answer, after the writes asked before.
    func removeAll() {
        queue.sync {
            let manager = FileManager.default
            for name in (try? manager.contentsOfDirectory(atPath: directory.path)) ?? [] {
                try? manager.removeItem(at: directory.appendingPathComponent(name))
            }
            index.withLock { $0 = Index() }
        }
    }

    /// Waits for the writes asked before: for tests.
    func flush() {
        queue.sync {}
    }

    private func write(_ response: CachedResponse) {
        guard let file = response.encoded() else { return }
        let path = path(of: response.key)
        let temporary = directory.appendingPathComponent(".\(UUID().uuidString)")
        let destination = directory.appendingPathComponent(path)
        do {
            try FileManager.default.createDirectory(at: destination.deletingLastPathComponent(),
                                                    withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            try file.write(to: temporary)
        } catch {
            // A full disk or a refusing folder: the answer is simply not kept.
            try? FileManager.default.removeItem(at: temporary)
            return
        }
        guard rename(temporary.path, destination.path) == 0 else {
            try? FileManager.default.removeItem(at: temporary)
            return
        }
        let excess = index.withLock { index -> [String] in
            index.touch(path, size: file.count)
            guard index.bytes > capacity else { return [] }
            var excess: [String] = []
            var bytes = index.bytes
            for (path, entry) in index.files.sorted(by: { $0.value.lastUse < $1.value.lastUse }) where bytes > capacity / 10 * 9 {
                excess.append(path)
                bytes -= entry.size
            }
            return excess
        }
        for path in excess { removeFile(path) }
    }

    private func removeFile(_ path: String) {
        try? FileManager.default.removeItem(at: directory.appendingPathComponent(path))
        index.withLock { $0.drop(path) }
    }
}
