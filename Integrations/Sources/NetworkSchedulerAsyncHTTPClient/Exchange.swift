import AsyncHTTPClient
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
    /// whole under the request's size limit and completed on the client's event loop.
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

        /// Sends `transportRequest`; follows its answer if it is a redirect the policy takes.
        func send(_ transportRequest: TransportRequest, redirectsLeft: Int) {
            let request = transportRequest.urlRequest
            let clientRequest: HTTPClient.Request
            guard let url = request.url else { return fail(URLError(.badURL)) }
            do {
                clientRequest = try Self.clientRequest(transportRequest, to: url)
            } catch {
                return fail(error)
            }
            let accumulator = ResponseAccumulator(request: clientRequest, maxBodySize: policy.maximumResponseSize)
            let task: HTTPClient.Task<HTTPClient.Response>
            if let sink = transportRequest.responseSink {
                let sinking = SinkingDelegate(sink: sink, url: url, limit: policy.maximumResponseSize,
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
                    if let next = try Redirect.next(status: Int(response.status.code), location: response.headers.first(name: "Location"),
                                                    of: request, policy: policy) {
                        guard redirectsLeft > 0 else { throw URLError(.httpTooManyRedirects) }
                        // A body file goes again with a redirect that keeps the method (307, 308).
                        let keepsBody = next.httpMethod == request.httpMethod
                        var redirected = TransportRequest(next, bodyFile: keepsBody ? transportRequest.bodyFile : nil)
                        redirected.responseSink = transportRequest.responseSink
                        return send(redirected, redirectsLeft: redirectsLeft - 1)
                    }
                    completion(.success(Self.transportResponse(response, from: url)))
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
            completion(.failure(AsyncHTTPClientTransport.mapped(error, limit: policy.maximumResponseSize)))
        }

        private static func clientRequest(_ transportRequest: TransportRequest, to url: URL) throws -> HTTPClient.Request {
            let request = transportRequest.urlRequest
            var headers = HTTPHeaders()
            for (name, value) in request.allHTTPHeaderFields ?? [:] where transportRequest.bodyFile == nil
                || name.lowercased() != "content-length" {
                headers.add(name: name, value: value)
            }
            let body = transportRequest.bodyFile.map(AsyncHTTPClientTransport.body(readFrom:)) ?? request.httpBody.map { .bytes($0) }
            return try HTTPClient.Request(url: url.absoluteString, method: HTTPMethod(rawValue: request.httpMethod ?? "GET"),
                                          headers: headers, body: body)
        }

        /// The response as the scheduler reads one: its head with the fields as URLSession
        /// gives them (a repeated name's values joined with ", "), and its body.
        private static func transportResponse(_ response: HTTPClient.Response, from url: URL) -> TransportResponse {
            var fields: [String: String] = [:]
            for (name, value) in response.headers {
                fields[name] = fields[name].map { "\($0), \(value)" } ?? value
            }
            let head = ResponseHead(url: url, statusCode: Int(response.status.code), headerFields: fields,
                                    httpVersion: "HTTP/\(response.version.major).\(response.version.minor)")
            return TransportResponse(data: response.body.map { Data($0.readableBytesView) } ?? Data(), head: head)
        }
    }
}
