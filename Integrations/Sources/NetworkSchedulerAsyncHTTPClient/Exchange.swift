import AsyncHTTPClient
import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NetworkScheduler
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

extension AsyncHTTPClientTransport {
    /// One request and the redirects it follows, each sent as a task of the client's own, read
    /// whole under the request's size limit and completed off the client's event loops.
    ///
    /// No Swift task per request: a new task allocates its frames in fresh slabs of a
    /// kilobyte each (nine per request through the client's async API), where a loop of
    /// long-lived tasks, as a raw client runs, reuses its own.
    final class Exchange: TransportTask, Sendable {
        private enum State {
            case sending(HTTPClient.Task<HTTPClient.Response>?)
            case cancelled
        }

        private let client: HTTPClient
        private let policy: TransportPolicy
        private let deadline: NIODeadline?
        private let progress: (@Sendable (TransferProgress) -> Void)?
        private let completion: @Sendable (Result<TransportResponse, any Error>) -> Void
        /// The client's task for the request on the wire, which `cancel()` cancels.
        private let state = NIOLockedValueBox(State.sending(nil))

        /// - Parameter deadline: the whole exchange's; nil for one whose deadline is kept by
        ///   whoever watches its progress (the scheduler moves an upload's as it goes).
        init(client: HTTPClient, policy: TransportPolicy, deadline: NIODeadline?,
             progress: (@Sendable (TransferProgress) -> Void)?,
             completion: @escaping @Sendable (Result<TransportResponse, any Error>) -> Void) {
            self.client = client
            self.policy = policy
            self.deadline = deadline
            self.progress = progress
            self.completion = completion
        }

        /// Sends `transportRequest`, as the scheduler built it: no `URLRequest` is made unless
        /// the answer is a redirect the policy takes, which it follows.
        func send(_ transportRequest: TransportRequest, redirectsLeft: Int) {
            let clientRequest: HTTPClient.Request
            do {
                clientRequest = try Self.clientRequest(transportRequest)
            } catch {
                return fail(error)
            }
            let urlString = transportRequest.urlString
            let accumulator = ResponseAccumulator(request: clientRequest, maxBodySize: policy.maximumResponseSize)
            let task: HTTPClient.Task<HTTPClient.Response>
            if let sink = transportRequest.responseSink {
                let sinking = SinkingDelegate(sink: sink, url: urlString, limit: policy.maximumResponseSize,
                                              expectedToSend: transportRequest.bodyLength, progress: progress)
                task = client.execute(request: clientRequest, delegate: sinking, deadline: deadline)
            } else if let progress {
                let reporting = ProgressReportingAccumulator(accumulator, expected: transportRequest.bodyLength, progress: progress)
                task = client.execute(request: clientRequest, delegate: reporting, deadline: deadline)
            } else {
                task = client.execute(request: clientRequest, delegate: accumulator, deadline: deadline)
            }
            let isCancelled = state.withLockedValue { state in
                guard case .sending = state else { return true }
                state = .sending(task)
                return false
            }
            // Cancelled while this request was being made: its task reports the cancellation.
            if isCancelled { task.cancel() }
            task.futureResult.whenComplete { [self] result in
                do {
                    let response = try result.get()
                    if Redirect.isRedirect(Int(response.status.code)), let next = try Redirect.next(
                        status: Int(response.status.code), location: response.headers.first(name: "Location"),
                        of: transportRequest.urlRequest, policy: policy
                    ) {
                        guard redirectsLeft > 0 else { throw URLError(.httpTooManyRedirects) }
                        // A body file goes again with a redirect that keeps the method (307, 308).
                        let keepsBody = next.httpMethod == transportRequest.method
                        var redirected = TransportRequest(next, bodyFile: keepsBody ? transportRequest.bodyFile : nil)
                        redirected.responseSink = transportRequest.responseSink
                        return send(redirected, redirectsLeft: redirectsLeft - 1)
                    }
                    finish(.success(Self.transportResponse(response, from: urlString)))
                } catch {
                    fail(error)
                }
            }
        }

        func cancel() {
            let task = state.withLockedValue { state -> HTTPClient.Task<HTTPClient.Response>? in
                defer { state = .cancelled }
                guard case .sending(let task) = state else { return nil }
                return task
            }
            task?.cancel()
        }

        private func fail(_ error: any Error) {
            finish(.failure(AsyncHTTPClientTransport.mapped(error, limit: policy.maximumResponseSize)))
        }

        /// Hands the outcome to the scheduler on a Dispatch queue. What it does then (its
        /// machine, the next attempt) would otherwise hold up the event loop that reads the
        /// connection's other answers and writes the next requests.
        private func finish(_ outcome: Result<TransportResponse, any Error>) {
            DispatchQueue.global().async { [completion] in completion(outcome) }
        }

        /// The client's request, made from the scheduler's parts.
        private static func clientRequest(_ transportRequest: TransportRequest) throws -> HTTPClient.Request {
            var headers = HTTPHeaders()
            for (name, value) in transportRequest.headerFields where transportRequest.bodyFile == nil
                || name.lowercased() != "content-length" {
                headers.add(name: name, value: value)
            }
            let body = transportRequest.bodyFile.map(AsyncHTTPClientTransport.body(readFrom:)) ?? transportRequest.body.map { .bytes($0) }
            return try HTTPClient.Request(url: transportRequest.urlString, method: HTTPMethod(rawValue: transportRequest.method),
                                          headers: headers, body: body)
        }

        /// The response as the scheduler reads one: its head with the fields as they came, in
        /// order (no dictionary is made unless asked for), and its body.
        private static func transportResponse(_ response: HTTPClient.Response, from url: String) -> TransportResponse {
            let head = ResponseHead(url: url, statusCode: Int(response.status.code),
                                    headerFields: HeaderFields(response.headers.map { (name: $0.name, value: $0.value) }),
                                    httpVersion: httpVersion(response.version))
            return TransportResponse(data: response.body.map { Data($0.readableBytesView) } ?? Data(), head: head)
        }
    }

    /// The version as `HTTPURLResponse` spells it.
    static func httpVersion(_ version: HTTPVersion) -> String {
        switch (version.major, version.minor) {
        case (1, 1): "HTTP/1.1"
        case (2, 0): "HTTP/2"
        default: "HTTP/\(version.major).\(version.minor)"
        }
    }
}
