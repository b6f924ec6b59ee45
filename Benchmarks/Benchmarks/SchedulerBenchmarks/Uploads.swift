import AsyncHTTPClient
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NetworkScheduler
import NetworkSchedulerAsyncHTTPClient
import NIOCore
import Synchronization

/// Scenario 10: uploads against nginx (`PUT /uploads/…`, which stores the body and answers once
/// it has read it all).
///
/// - A file of `fileBytes` sent by each raw client and by the scheduler over it, one after the
///   other in the same iteration: its throughput, and the process's peak resident growth
///   while it went out (sampled every 2 ms).
/// - A `lowBytes` upload at `.low` while high-priority JSON GETs to the same host run, as many
///   at once as the budget has slots beside the upload: their queue wait (p99) against one
///   JSON call's wire time (p50), over each transport.
struct Uploads {
    enum Client: String, CaseIterable {
        case rawURLSession = "raw URLSession upload task"
        case scheduledURLSession = "scheduler over URLSession"
        case rawAsyncHTTPClient = "raw AsyncHTTPClient"
        case scheduledAsyncHTTPClient = "scheduler over AsyncHTTPClient"
    }

    struct Sent {
        var bytesPerSecond: Double
        var peakGrowthBytes: Int
    }

    struct Latency {
        var queueWaitP99: Double
        var wireTimeP50: Double
        var calls: Int
    }

    let server: NginxProcess
    let folder: URL

    static func start() throws -> Uploads {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("uploads-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return Uploads(server: try NginxProcess.start(), folder: folder)
    }

    func stop() {
        server.stop()
        try? FileManager.default.removeItem(at: folder)
    }

    /// A file of `bytes` bytes (a repeating pattern), written a megabyte at a time.
    func file(bytes: Int, named name: String) throws -> URL {
        let url = folder.appendingPathComponent(name)
        if let size = try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber, size.intValue == bytes {
            return url
        }
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else { throw BenchmarkFailure("cannot write \(url.path)") }
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        let block = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        var written = 0
        while written < bytes {
            let chunk = block.prefix(bytes - written)
            try handle.write(contentsOf: chunk)
            written += chunk.count
        }
        return url
    }

    // MARK: - One file, each client

    func send(_ file: URL, bytes: Int, with client: Client) async throws -> Sent {
        let target = server.baseURL.appendingPathComponent("uploads/\(client.rawValue.replacingOccurrences(of: " ", with: "-"))")
        let sampler = PeakResident()
        let start = now()
        switch client {
        case .rawURLSession:
            var request = URLRequest(url: target)
            request.httpMethod = "PUT"
            let session = URLSession(configuration: .ephemeral)
            defer { session.invalidateAndCancel() }
            let status: Int = try await withCheckedThrowingContinuation { continuation in
                session.uploadTask(with: request, fromFile: file) { _, response, error in
                    if let error { return continuation.resume(throwing: error) }
                    continuation.resume(returning: (response as? HTTPURLResponse)?.statusCode ?? 0)
                }.resume()
            }
            try Self.check(status)
        case .rawAsyncHTTPClient:
            let client = HTTPClient(eventLoopGroupProvider: .singleton)
            var request = HTTPClientRequest(url: target.absoluteString)
            request.method = .PUT
            request.body = .stream(FileChunks(url: file), length: .known(Int64(bytes)))
            do {
                let response = try await client.execute(request, timeout: .seconds(600))
                try Self.check(Int(response.status.code))
                try await client.shutdown()
            } catch {
                try? await client.shutdown()
                throw error
            }
        case .scheduledURLSession, .scheduledAsyncHTTPClient:
            let (transport, shutDown) = Self.transport(scheduled: client)
            let api = APIClient(baseURL: server.baseURL, scheduler: RequestScheduler { $0.transport = transport }, timeout: 60)
            do {
                _ = try await api.value(for: Resource<Data>(.put, path: String(target.path.dropFirst()), body: .file(file)))
                await shutDown()
            } catch {
                await shutDown()
                throw error
            }
        }
        let seconds = Double(now() - start) / 1e9
        return Sent(bytesPerSecond: Double(bytes) / seconds, peakGrowthBytes: sampler.stop())
    }

    private static func check(_ status: Int) throws {
        guard (200..<300).contains(status) else { throw BenchmarkFailure("nginx answered \(status) to an upload") }
    }

    private static func transport(scheduled client: Client) -> (any HTTPTransport, @Sendable () async -> Void) {
        if client == .scheduledAsyncHTTPClient {
            let transport = AsyncHTTPClientTransport()
            return (transport, { try? await transport.shutdown() })
        }
        let transport = URLSessionTransport()
        return (transport, { transport.invalidate() })
    }

    // MARK: - JSON calls beside a low-priority upload

    func latencyBeside(_ file: URL, over client: Client) async throws -> Latency {
        let (transport, shutDown) = Self.transport(scheduled: client)
        let scheduler = RequestScheduler { $0.transport = transport }
        let api = APIClient(baseURL: server.baseURL, scheduler: scheduler, timeout: 60)
        let friends = Resource<Data>(path: "users/1/friends")
        // Warm: connections open before the upload takes its slot.
        for _ in 0..<scheduler.hostBudget { _ = try await api.value(for: friends, priority: .high) }

        let upload = Resource<Data>(.put, path: "uploads/beside-\(client == .scheduledURLSession ? "urlsession" : "ahc")", body: .file(file))
        // As many JSON calls at once as the budget has slots beside the upload's, until the
        // upload ends (each lane at most 20,000 calls).
        let lanes = scheduler.hostBudget - 1
        let samples = UploadSideSamples()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                _ = try await api.value(for: upload, priority: .low)
                samples.uploadEnded()
            }
            for _ in 0..<lanes {
                group.addTask {
                    for _ in 0..<20_000 where !samples.isUploaded {
                        let reply = try await api.reply(for: friends, priority: .high)
                        samples.add(queued: reply.metrics.queuedDuration, wire: reply.metrics.networkDuration)
                    }
                }
            }
            try await group.waitForAll()
        }
        await shutDown()
        let taken = samples.taken
        return Latency(queueWaitP99: percentile(0.99, of: taken.map(\.queued)), wireTimeP50: percentile(0.5, of: taken.map(\.wire)),
                       calls: taken.count)
    }
}

/// The JSON calls' queue waits and wire times, and whether the upload beside them ended.
private final class UploadSideSamples: Sendable {
    private let state = Mutex((taken: [(queued: Double, wire: Double)](), isUploaded: false))

    var isUploaded: Bool { state.withLock { $0.isUploaded } }
    var taken: [(queued: Double, wire: Double)] { state.withLock { $0.taken } }

    func uploadEnded() { state.withLock { $0.isUploaded = true } }

    func add(queued: Double, wire: Double) { state.withLock { $0.taken.append((queued, wire)) } }
}

/// A file as a sequence of 256 KiB buffers, each read when the client asks for it.
private struct FileChunks: AsyncSequence, Sendable {
    let url: URL

    struct AsyncIterator: AsyncIteratorProtocol {
        let handle: FileHandle?

        mutating func next() async throws -> ByteBuffer? {
            guard let chunk = try handle?.read(upToCount: 256 * 1_024), !chunk.isEmpty else {
                try? handle?.close()
                return nil
            }
            return ByteBuffer(bytes: chunk)
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(handle: try? FileHandle(forReadingFrom: url))
    }
}
