import AsyncHTTPClient
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NetworkScheduler
import NetworkSchedulerAsyncHTTPClient
import NIOCore

/// Scenario 11: a 1 GiB download from nginx (a static file), saved to disk by each raw client
/// and by the scheduler over each transport, one after the other in the same iteration: its
/// throughput, and the process's peak resident growth while it came in (sampled every 2 ms).
///
/// The raw clients are what an app would write without the library: URLSession's download task
/// (FoundationNetworking writes its temporary file a chunk at a time), a URLSession data task
/// whose delegate writes each chunk to a file (the scheduler's own way, without it), and
/// AsyncHTTPClient's `FileDownloadDelegate`.
struct Downloads {
    enum Client: String, CaseIterable {
        case rawDownloadTask = "raw URLSession download task"
        case rawDataTaskToFile = "raw URLSession data task to a file"
        case scheduledURLSession = "scheduler over URLSession"
        case scheduledBesideGETs = "scheduler over URLSession at low beside 20 high GETs"
        case rawAsyncHTTPClient = "raw AsyncHTTPClient FileDownloadDelegate"
        case scheduledAsyncHTTPClient = "scheduler over AsyncHTTPClient"
    }

    struct Received {
        var bytesPerSecond: Double
        var peakGrowthBytes: Int
        /// The slowest of the GETs sent beside the download, from send to model, in µs.
        var slowestGETMicroseconds: Int?
        /// Their median, in µs.
        var medianGETMicroseconds: Int?
    }

    let server: NginxProcess
    let folder: URL

    static func start(bytes: Int) throws -> Downloads {
        let server = try NginxProcess.start()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("downloads-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let downloads = Downloads(server: server, folder: folder)
        try downloads.writeServedFile(bytes: bytes)
        return downloads
    }

    func stop() {
        server.stop()
        try? FileManager.default.removeItem(at: folder)
    }

    /// The file nginx serves at `/uploads/served.bin`, where its uploads land.
    private func writeServedFile(bytes: Int) throws {
        let url = server.uploadsFolder.appendingPathComponent("served.bin")
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else { throw BenchmarkFailure("cannot write \(url.path)") }
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        let block = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        for _ in 0..<(bytes >> 20) { try handle.write(contentsOf: block) }
    }

    func receive(bytes: Int, with client: Client) async throws -> Received {
        let source = server.baseURL.appendingPathComponent("uploads/served.bin")
        let destination = folder.appendingPathComponent(client.rawValue.replacingOccurrences(of: " ", with: "-") + ".bin")
        try? FileManager.default.removeItem(at: destination)
        let sampler = PeakResident()
        var gets: (median: Int, slowest: Int)?
        let start = now()
        switch client {
        case .rawDownloadTask:
            let session = URLSession(configuration: .ephemeral)
            defer { session.invalidateAndCancel() }
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                session.downloadTask(with: source) { file, _, error in
                    if let error { return continuation.resume(throwing: error) }
                    continuation.resume(with: Result { try FileManager.default.moveItem(at: file!, to: destination) })
                }.resume()
            }
        case .rawDataTaskToFile:
            let writer = try ChunkWriter(to: destination)
            let session = URLSession(configuration: .ephemeral, delegate: writer, delegateQueue: nil)
            defer { session.invalidateAndCancel() }
            try await writer.run(session.dataTask(with: source))
        case .rawAsyncHTTPClient:
            let client = HTTPClient(eventLoopGroupProvider: .singleton)
            do {
                let delegate = try FileDownloadDelegate(path: destination.path)
                _ = try await client.execute(request: HTTPClient.Request(url: source), delegate: delegate).futureResult.get()
                try await client.shutdown()
            } catch {
                try? await client.shutdown()
                throw error
            }
        case .scheduledBesideGETs:
            let session = URLSessionTransport()
            defer { session.invalidate() }
            let api = APIClient(baseURL: server.baseURL, scheduler: RequestScheduler { $0.transport = session }, timeout: 60)
            let (coming, comes) = AsyncStream<Void>.makeStream()
            let (ended, ends) = AsyncStream<Result<URL, ServiceError>>.makeStream()
            api.send(.download("uploads/served.bin", to: destination), priority: .low,
                     progress: { if $0.bytesReceived >= 1 << 20 { comes.yield() } }) {
                // Also ends the wait for the first MiB: a download that fails first must not hang.
                comes.finish()
                ends.yield($0)
                ends.finish()
            }
            for await _ in coming { break }
            gets = try await Self.getsBeside(count: 20, with: api)
            for await result in ended { _ = try result.get() }
        case .scheduledURLSession, .scheduledAsyncHTTPClient:
            let (transport, shutDown): (any HTTPTransport, @Sendable () async -> Void)
            if client == .scheduledAsyncHTTPClient {
                let ahc = AsyncHTTPClientTransport()
                (transport, shutDown) = (ahc, { try? await ahc.shutdown() })
            } else {
                let session = URLSessionTransport()
                (transport, shutDown) = (session, { session.invalidate() })
            }
            let api = APIClient(baseURL: server.baseURL, scheduler: RequestScheduler { $0.transport = transport }, timeout: 60)
            do {
                _ = try await api.value(for: .download("uploads/served.bin", to: destination, maximumSize: bytes))
                await shutDown()
            } catch {
                await shutDown()
                throw error
            }
        }
        let seconds = Double(now() - start) / 1e9
        let growth = sampler.stop()
        let size = (try FileManager.default.attributesOfItem(atPath: destination.path)[.size] as? NSNumber)?.intValue
        guard size == bytes else { throw BenchmarkFailure("\(client.rawValue) saved \(size ?? 0) bytes of \(bytes)") }
        try? FileManager.default.removeItem(at: destination)
        return Received(bytesPerSecond: Double(bytes) / seconds, peakGrowthBytes: growth, slowestGETMicroseconds: gets?.slowest,
                        medianGETMicroseconds: gets?.median)
    }

    /// Sends `count` `.high` GETs of the friends JSON, one after the other (while a download
    /// runs); their median and slowest times, in µs.
    private static func getsBeside(count: Int, with api: APIClient) async throws -> (median: Int, slowest: Int) {
        var times: [UInt64] = []
        for _ in 0..<count {
            let sent = now()
            _ = try await api.value(for: Resource<[User]>(path: "users/1/friends"), priority: .high)
            times.append(now() - sent)
        }
        times.sort()
        return (Int(times[times.count / 2] / 1000), Int((times.last ?? 0) / 1000))
    }
}

/// A data task's delegate that writes each chunk to a file as it arrives.
private final class ChunkWriter: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // Safety: the handle is written only on the session's serial delegate queue; the
    // continuation is set before the task is resumed, and resumed once, by its completion.
    private let handle: FileHandle
    private var continuation: CheckedContinuation<Void, any Error>?

    init(to url: URL) throws {
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else { throw BenchmarkFailure("cannot write \(url.path)") }
        handle = try FileHandle(forWritingTo: url)
    }

    func run(_ task: URLSessionDataTask) async throws {
        try await withCheckedThrowingContinuation { continuation in
            self.continuation = continuation
            task.resume()
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        try? handle.write(contentsOf: data)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        try? handle.close()
        if let error { continuation?.resume(throwing: error) } else { continuation?.resume() }
        continuation = nil
    }
}
