import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import NetworkScheduler
import NetworkSchedulerTesting

/// Where the cache keeps its answers: memory bounded by bytes and least recently used first
/// out; a folder that survives a relaunch, names nothing of its users, bounds its bytes, and
/// reads a damaged file as no answer.
@Suite struct CacheStoreTests {
    private static func answer(_ path: String, credential: String? = nil, body: Data = Data("body".utf8)) -> CachedResponse {
        let url = "https://api.test/v1/\(path)"
        return CachedResponse(key: CacheKey(method: "GET", url: url, identity: credential), url: URL(string: url)!,
                              statusCode: 200, fields: ["cache-control": "max-age=600", "etag": "\"1\""], body: body,
                              requested: Date(timeIntervalSince1970: 1_800_000_000),
                              received: Date(timeIntervalSince1970: 1_800_000_000), varied: ["accept": "application/json"])
    }

    private static func folder() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("cache-\(UUID().uuidString)")
    }

    private static func files(in folder: URL) -> [URL] {
        let enumerator = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)
        return (enumerator?.allObjects as? [URL] ?? []).filter { !$0.hasDirectoryPath && (try? $0.checkResourceIsReachable()) == true }
            .filter { (try? FileManager.default.attributesOfItem(atPath: $0.path)[.type] as? FileAttributeType) == .typeRegular }
    }

    @Test func memoryDropsTheLeastRecentlyUsedPastItsCapacity() {
        let body = Data(repeating: 1, count: 1_000)
        var store = MemoryCacheStore(capacity: 16_000)
        for index in 0..<10 { store.store(Self.answer("\(index)", body: body)) }
        _ = store.response(for: Self.answer("0").key)
        for index in 10..<14 { store.store(Self.answer("\(index)", body: body)) }

        #expect(store.bytes <= 16_000)
        #expect(store.response(for: Self.answer("0").key) != nil, "used recently")
        #expect(store.response(for: Self.answer("1").key) == nil, "the least recently used")
        #expect(store.response(for: Self.answer("13").key) != nil)
        store.store(Self.answer("large", body: Data(repeating: 1, count: 4_000)))
        #expect(store.response(for: Self.answer("large").key) == nil, "more than an eighth of the capacity")
    }

    @Test func answersOnDiskOutliveTheirCacheAndServeAScheduler() async throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let transport = StubTransport { _ in
            .respond(status: 200, body: Data("kept".utf8),
                     headers: ["Cache-Control": "max-age=600", "Link": "</a>; rel=next", "link": "</z>; rel=last"])
        }
        do {
            let cache = try ResponseCache(directory: folder)
            let scheduler = RequestScheduler { $0.transport = transport; $0.cache = cache }
            let api = APIClient(baseURL: URL(string: "https://api.test/v1")!, scheduler: scheduler, bearerToken: { "ada-token" })
            _ = try await api.value(for: Resource<Data>(path: "profile"))
            cache.flush()
        }
        // A new launch: a new cache on the same folder, and nothing in memory.
        let scheduler = RequestScheduler { $0.transport = transport; $0.cache = try? ResponseCache(directory: folder) }
        let api = APIClient(baseURL: URL(string: "https://api.test/v1")!, scheduler: scheduler, bearerToken: { "ada-token" })

        let reply = try await api.reply(for: Resource<Data>(path: "profile"))

        #expect(reply.cacheUse == .fresh)
        #expect(String(decoding: reply.value, as: UTF8.self) == "kept")
        #expect(reply.head.headerFields.values(for: "Link") == ["</a>; rel=next", "</z>; rel=last"], "each field as it came")
        #expect(transport.arrivals.count == 1)
        let files = Self.files(in: folder)
        #expect(files.count == 1)
        for file in files {
            let names = file.path.dropFirst(folder.standardizedFileURL.path.count).split(separator: "/")
            #expect(names.allSatisfy { $0.count == 64 && $0.allSatisfy(\.isHexDigit) }, "hashed names: \(names)")
            #expect(!(try Data(contentsOf: file)).contains(Data("ada-token".utf8)), "the token is kept as its digest only")
        }
    }

    @Test func aDamagedFileIsNoAnswerAndIsRemoved() throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let original = Self.answer("profile", credential: "authorization:Bearer ada\n", body: Data((0..<2_000).map { UInt8($0 % 251) }))
        let cache = try ResponseCache(memoryCapacity: 0, directory: folder)
        cache.store(original)
        cache.flush()
        let file = try #require(Self.files(in: folder).first)
        let whole = try Data(contentsOf: file)
        var generator = SeededGenerator(seed: 0x5EED)
        var served = 0

        for round in 0..<400 {
            var damaged = whole
            switch round % 3 {
            case 0: damaged = damaged.prefix(Int.random(in: 0..<whole.count, using: &generator))
            case 1:
                for _ in 0...Int.random(in: 0..<4, using: &generator) {
                    let index = Int.random(in: 0..<whole.count, using: &generator)
                    damaged[index] ^= UInt8(1 << Int.random(in: 0..<8, using: &generator))
                }
            default: damaged.append(contentsOf: [UInt8](repeating: 0, count: Int.random(in: 1..<64, using: &generator)))
            }
            try damaged.write(to: file)
            if let read = cache.stored(original.key) {
                // Only a change the checksum cannot see may be read, and then it is the answer itself.
                #expect(read.body == original.body && read.fields == original.fields)
                served += 1
            } else {
                cache.flush()
                #expect(!FileManager.default.fileExists(atPath: file.path), "a damaged file is removed")
                // Back in the index for the next round, as a store would have it.
                cache.store(original)
                cache.flush()
            }
        }
        #expect(served == 0, "every damage was seen")
        // Another user's key finds nothing in the same file's place.
        #expect(cache.stored(Self.answer("profile", credential: "authorization:Bearer bob\n").key) == nil)
    }

    @Test func twoCachesOnOneFolderShareItsStoreAndItsBound() async throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let first = try ResponseCache(memoryCapacity: 0, directory: folder, diskCapacity: 200_000)
        let second = try ResponseCache(memoryCapacity: 0, directory: folder, diskCapacity: 1)
        let body = Data(repeating: 7, count: 10_000)

        await withTaskGroup(of: Void.self) { group in
            for (index, cache) in [first, second].enumerated() {
                group.addTask {
                    for entry in 0..<50 { cache.store(Self.answer("\(index)-\(entry)", body: body)) }
                }
            }
        }
        first.flush()

        let bytes = Self.files(in: folder).reduce(0) { $0 + ((try? Data(contentsOf: $1).count) ?? 0) }
        #expect(bytes <= 200_000, "the first cache's capacity holds for both")
        let readable = (0..<2).flatMap { index in (0..<50).compactMap { second.stored(Self.answer("\(index)-\($0)").key) } }
        #expect(!readable.isEmpty)
        #expect(readable.allSatisfy { $0.body == body })
    }
}
