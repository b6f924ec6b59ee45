import AsyncHTTPClient
import Foundation
import NetworkScheduler
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

extension AsyncHTTPClientTransport {
    /// A body read from its file a chunk at a time as the connection takes it: the next chunk
    /// is read only once the last one is written, so memory stays at a chunk whatever the size.
    /// A file that ends early (truncated while it is sent) fails the request, as AsyncHTTPClient
    /// fails any body shorter than its `Content-Length`.
    static func body(readFrom file: TransportRequest.BodyFile) -> HTTPClient.Body {
        .stream(contentLength: file.length) { writer in
            let promise = MultiThreadedEventLoopGroup.singleton.any().makePromise(of: Void.self)
            do {
                let reader = try FileChunks(file.url)
                reader.send(to: writer, completing: promise)
            } catch {
                promise.fail(ServiceError.invalidRequest(reason: "the body file \(file.url.lastPathComponent) cannot be read"))
            }
            return promise.futureResult
        }
    }

    /// A file read in chunks off the event loops, one at a time.
    private final class FileChunks: Sendable {
        private let handle: FileHandle
        private let name: String
        private static let chunkSize = 256 * 1_024
        private static let reading = DispatchQueue(label: "NetworkSchedulerAsyncHTTPClient.upload", attributes: .concurrent)

        init(_ url: URL) throws {
            handle = try FileHandle(forReadingFrom: url)
            name = url.lastPathComponent
        }

        func send(to writer: HTTPClient.Body.StreamWriter, completing promise: EventLoopPromise<Void>) {
            Self.reading.async { [self] in
                let chunk: Data
                do {
                    chunk = try handle.read(upToCount: Self.chunkSize) ?? Data()
                } catch {
                    try? handle.close()
                    return promise.fail(ServiceError.invalidRequest(reason: "the body file \(name) cannot be read"))
                }
                guard !chunk.isEmpty else {
                    try? handle.close()
                    return promise.succeed(())
                }
                writer.write(.byteBuffer(ByteBuffer(bytes: chunk))).whenComplete { [self] result in
                    switch result {
                    case .success: send(to: writer, completing: promise)
                    case .failure(let error):
                        try? handle.close()
                        promise.fail(error)
                    }
                }
            }
        }
    }

    /// A response read whole, as ``ResponseAccumulator`` reads it, that also tells how much of
    /// the request's body has gone out.
    final class ProgressReportingAccumulator: HTTPClientResponseDelegate {
        typealias Response = HTTPClient.Response

        private let accumulator: ResponseAccumulator
        private let expected: Int64?
        private let progress: @Sendable (TransferProgress) -> Void
        private let sent = NIOLockedValueBox<Int64>(0)

        init(_ accumulator: ResponseAccumulator, expected: Int64?, progress: @escaping @Sendable (TransferProgress) -> Void) {
            self.accumulator = accumulator
            self.expected = expected
            self.progress = progress
        }

        func didSendRequestPart(task: HTTPClient.Task<Response>, _ part: IOData) {
            let total = sent.withLockedValue { sent in
                sent += Int64(part.readableBytes)
                return sent
            }
            progress(TransferProgress(bytesSent: total, bytesExpectedToSend: expected))
        }

        func didVisitURL(task: HTTPClient.Task<Response>, _ request: HTTPClient.Request, _ head: HTTPResponseHead) {
            accumulator.didVisitURL(task: task, request, head)
        }

        func didReceiveHead(task: HTTPClient.Task<Response>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
            accumulator.didReceiveHead(task: task, head)
        }

        func didReceiveBodyPart(task: HTTPClient.Task<Response>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
            accumulator.didReceiveBodyPart(task: task, buffer)
        }

        func didReceiveError(task: HTTPClient.Task<Response>, _ error: any Error) {
            accumulator.didReceiveError(task: task, error)
        }

        func didFinishRequest(task: HTTPClient.Task<Response>) throws -> Response {
            try accumulator.didFinishRequest(task: task)
        }
    }
}
