import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// The raw delegate client's session delegate: appends each task's body as it arrives and hands
/// it over when the task completes. The least a client does that reads bodies as they come, so
/// that it can stop past a size limit, which completion handlers cannot.
final class BodyCollector: NSObject, URLSessionDataDelegate, Sendable {
    typealias Completion = @Sendable (Data?, URLResponse?, (any Error)?) -> Void

    private let tasks = Mutex([Int: (body: Data, completion: Completion)]())

    func collect(_ task: URLSessionTask, completion: @escaping Completion) {
        tasks.withLock { $0[task.taskIdentifier] = (Data(), completion) }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        tasks.withLock { $0[dataTask.taskIdentifier]?.body.append(data) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let record = tasks.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        record.completion(record.body, task.response, error)
    }
}
