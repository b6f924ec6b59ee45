import AsyncHTTPClient
import Foundation
import NetworkScheduler
import NIOConcurrencyHelpers
import NIOCore
import NIOFoundationCompat
import NIOHTTP1

extension AsyncHTTPClientTransport {
    /// A response whose accepted body goes to a ``ResponseBodySink`` (a download's file, a
    /// stream's reader) as it arrives, a chunk at a time: the next is read from the connection
    /// only once the last is written and the sink has room, so a slow disk or a slow reader
    /// slows the socket instead of filling memory. A body the sink
    /// declines (an error's) is collected under the size limit, as ``ResponseAccumulator`` does.
    final class SinkingDelegate: HTTPClientResponseDelegate {
        typealias Response = HTTPClient.Response

        private struct State {
            var head: HTTPResponseHead?
            var isSunk = false
            var body: ByteBuffer?
            var sent: Int64 = 0
        }

        private let sink: any ResponseBodySink
        private let url: String
        private let limit: Int
        private let expectedToSend: Int64?
        private let progress: (@Sendable (TransferProgress) -> Void)?
        private let state = NIOLockedValueBox(State())
        /// Where chunks are written, off the event loops.
        private static let writing = DispatchQueue(label: "NetworkSchedulerAsyncHTTPClient.download", attributes: .concurrent)

        init(sink: any ResponseBodySink, url: String, limit: Int, expectedToSend: Int64?,
             progress: (@Sendable (TransferProgress) -> Void)?) {
            self.sink = sink
            self.url = url
            self.limit = limit
            self.expectedToSend = expectedToSend
            self.progress = progress
        }

        func didSendRequestPart(task: HTTPClient.Task<Response>, _ part: IOData) {
            guard let progress else { return }
            let total = state.withLockedValue { state in
                state.sent += Int64(part.readableBytes)
                return state.sent
            }
            progress(TransferProgress(bytesSent: total, bytesExpectedToSend: expectedToSend))
        }

        func didReceiveHead(task: HTTPClient.Task<Response>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
            let responseHead = ResponseHead(url: url, statusCode: Int(head.status.code),
                                            headerFields: HeaderFields(head.headers.map { (name: $0.name, value: $0.value) }),
                                            httpVersion: AsyncHTTPClientTransport.httpVersion(head.version))
            let isSunk: Bool
            do {
                isSunk = try sink.accept(responseHead)
            } catch {
                return task.eventLoop.makeFailedFuture(error)
            }
            if !isSunk, let length = head.headers.first(name: "Content-Length").flatMap(Int.init), length > limit {
                return task.eventLoop.makeFailedFuture(ServiceError.responseTooLarge(limit: limit))
            }
            state.withLockedValue { state in
                state.head = head
                state.isSunk = isSunk
            }
            return task.eventLoop.makeSucceededVoidFuture()
        }

        func didReceiveBodyPart(task: HTTPClient.Task<Response>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
            let isSunk = state.withLockedValue { $0.isSunk }
            guard isSunk else {
                let tooLarge = state.withLockedValue { state -> Bool in
                    var body = state.body ?? ByteBuffer()
                    guard body.readableBytes + buffer.readableBytes <= limit else { return true }
                    var chunk = buffer
                    body.writeBuffer(&chunk)
                    state.body = body
                    return false
                }
                return tooLarge ? task.eventLoop.makeFailedFuture(ServiceError.responseTooLarge(limit: limit))
                    : task.eventLoop.makeSucceededVoidFuture()
            }
            let written = task.eventLoop.makePromise(of: Void.self)
            // The buffer's own bytes, not a copy: a 1 GiB download copied them once more.
            let chunk = buffer.getData(at: buffer.readerIndex, length: buffer.readableBytes, byteTransferStrategy: .noCopy) ?? Data()
            Self.writing.async { [sink] in
                do {
                    try sink.write(chunk)
                } catch {
                    written.fail(error)
                    return
                }
                // A stream's reader behind: the next chunk is read once it caught up.
                if sink.hasRoom(orWhenRoom: { written.succeed(()) }) { written.succeed(()) }
            }
            return written.futureResult
        }

        func didReceiveError(task: HTTPClient.Task<Response>, _ error: any Error) {}

        func didFinishRequest(task: HTTPClient.Task<Response>) throws -> Response {
            let (head, body) = state.withLockedValue { ($0.head, $0.body) }
            guard let head else { throw URLError(.badServerResponse) }
            return Response(host: URL(string: url)?.host ?? "", status: head.status, version: head.version, headers: head.headers, body: body)
        }
    }
}
