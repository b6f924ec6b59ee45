import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NetworkScheduler

// One download in a fresh process, for `scripts/download-pairs.sh`: a bare URLSession download
// task; the same with a delegate that hears its progress; a bare data task whose delegate
// writes each chunk as it comes; or the scheduler's download at `.low` with 20 `.high` GETs of
// a small JSON beside it.
// Prints one line: the client, MB/s, the process's peak resident memory (VmHWM) in MB, and for
// the scheduler the GETs' median and slowest in ms.
//
//     DownloadProbe raw|progress|datatask|scheduler BASE-URL FILE-PATH JSON-PATH DESTINATION BYTES

struct Friend: Decodable, Sendable {
    let id: Int
    let name: String
}

func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

/// The process's peak resident memory so far, in MB (`VmHWM` of `/proc/self/status`).
func peakResidentMegabytes() -> Double {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
          let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
          let kilobytes = Double(line.split(separator: " ").dropFirst().first ?? "") else { return 0 }
    return kilobytes / 1024
}

let arguments = CommandLine.arguments
guard arguments.count == 7, let base = URL(string: arguments[2]), let bytes = Int(arguments[6]) else {
    print("usage: DownloadProbe raw|progress|datatask|scheduler BASE-URL FILE-PATH JSON-PATH DESTINATION BYTES")
    exit(2)
}
let (mode, file, json, destination) = (arguments[1], arguments[3], arguments[4], URL(fileURLWithPath: arguments[5]))
try? FileManager.default.removeItem(at: destination)

let start = now()
var gets: [UInt64] = []
switch mode {
case "raw":
    let session = URLSession(configuration: .ephemeral)
    let done = DispatchSemaphore(value: 0)
    session.downloadTask(with: base.appendingPathComponent(file)) { saved, _, error in
        if let error { fatalError("raw download failed: \(error)") }
        do { try FileManager.default.moveItem(at: saved!, to: destination) } catch { fatalError("\(error)") }
        done.signal()
    }.resume()
    done.wait()
    session.invalidateAndCancel()
case "progress":
    let done = DispatchSemaphore(value: 0)
    let session = URLSession(configuration: .ephemeral, delegate: ProgressListener(destination: destination, done: done),
                             delegateQueue: nil)
    session.downloadTask(with: base.appendingPathComponent(file)).resume()
    done.wait()
case "datatask":
    _ = FileManager.default.createFile(atPath: destination.path, contents: nil)
    let handle = try FileHandle(forWritingTo: destination)
    let done = DispatchSemaphore(value: 0)
    let session = URLSession(configuration: .ephemeral, delegate: ChunkWriter(handle: handle, done: done), delegateQueue: nil)
    session.dataTask(with: base.appendingPathComponent(file)).resume()
    done.wait()
    try handle.close()
case "scheduler":
    let transport = URLSessionTransport()
    let api = APIClient(baseURL: base, scheduler: RequestScheduler { $0.transport = transport }, timeout: 60)
    let firstMiB = DispatchSemaphore(value: 0)
    let ended = DispatchSemaphore(value: 0)
    let told = Locked(false)
    api.send(.download(file, to: destination, maximumSize: bytes), priority: .low,
             progress: { step in
                 if step.bytesReceived >= 1 << 20, told.claim() { firstMiB.signal() }
             }) { result in
        if case .failure(let error) = result { fatalError("scheduler download failed: \(error)") }
        if told.claim() { firstMiB.signal() }
        ended.signal()
    }
    firstMiB.wait()
    // Detached: top-level code runs on the main actor, which this thread's waits block.
    let times = Task.detached { () async throws -> [UInt64] in
        var times: [UInt64] = []
        for _ in 0..<20 {
            let sent = now()
            _ = try await api.value(for: Resource<[Friend]>(path: json), priority: .high)
            times.append(now() - sent)
        }
        return times
    }
    let getsDone = DispatchSemaphore(value: 0)
    let measured = Box<[UInt64]>([])
    Task.detached {
        measured.value = (try? await times.value) ?? []
        getsDone.signal()
    }
    getsDone.wait()
    gets = measured.value
    ended.wait()
    transport.invalidate()
default:
    print("unknown mode \(mode)")
    exit(2)
}
let seconds = Double(now() - start) / 1e9
let size = (try? FileManager.default.attributesOfItem(atPath: destination.path)[.size] as? NSNumber)?.intValue ?? 0
guard size == bytes else { fatalError("saved \(size) bytes of \(bytes)") }
try? FileManager.default.removeItem(at: destination)
gets.sort()
let getFigures = gets.isEmpty ? "" : String(format: " %.2f %.2f", Double(gets[gets.count / 2]) / 1e6, Double(gets.last!) / 1e6)
print(String(format: "%@ %.0f %.1f", mode, Double(bytes) / seconds / 1e6, peakResidentMegabytes()) + getFigures)

/// A value handed from a task to the main thread, which reads it after a semaphore.
final class Box<Value>: @unchecked Sendable {
    // Safety: written once before the semaphore is signalled, read after it is waited on.
    var value: Value
    init(_ value: Value) { self.value = value }
}

/// A flag set once, from any thread.
final class Locked: @unchecked Sendable {
    // Safety: read and written only under `lock`.
    private let lock = NSLock()
    private var value: Bool
    init(_ value: Bool) { self.value = value }
    /// Sets it; true if it was not set.
    func claim() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        defer { value = true }
        return !value
    }
}

/// A bare data task's delegate: writes each chunk as it comes, on the session's delegate queue.
final class ChunkWriter: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // Safety: the handle is written only on the session's serial delegate queue.
    let handle: FileHandle
    let done: DispatchSemaphore
    init(handle: FileHandle, done: DispatchSemaphore) {
        self.handle = handle
        self.done = done
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        handle.write(data)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        if let error { fatalError("bare data task failed: \(error)") }
        done.signal()
    }
}

/// A bare download task's delegate that hears its progress, as any client that reports it must.
final class ProgressListener: NSObject, URLSessionDownloadDelegate, @unchecked Sendable {
    // Safety: `steps` is touched only on the session's serial delegate queue.
    let destination: URL
    let done: DispatchSemaphore
    var steps = 0
    init(destination: URL, done: DispatchSemaphore) {
        self.destination = destination
        self.done = done
    }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64,
                    totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64) {
        steps += 1
    }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
        do { try FileManager.default.moveItem(at: location, to: destination) } catch { fatalError("\(error)") }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        if let error { fatalError("download task with progress failed: \(error)") }
        done.signal()
    }
}
