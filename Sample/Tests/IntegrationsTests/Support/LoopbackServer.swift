import Foundation
import NetworkSchedulerTesting
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

/// A small HTTP/1.1 server on 127.0.0.1 and a port chosen at run time, which answers each
/// request as the test says and logs the connections it sees open and close.
final class LoopbackServer: Sendable {
    /// What the server does with a request.
    enum Answer: Sendable {
        /// Answers at once.
        case respond(status: HTTPResponseStatus, headers: [(String, String)], body: String)
        /// Never answers; the connection stays open until the client closes it.
        case hold
    }

    /// Every connection opened, every connection closed, every request's target, as they happen.
    let opened: EventLog<Void>
    let closed: EventLog<Void>
    let requests: EventLog<String>
    let port: Int
    private let channel: any Channel
    private let mostOpen: NIOLockedValueBox<(now: Int, most: Int)>

    var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }
    /// The most connections that were open at once.
    var mostOpenAtOnce: Int { mostOpen.withLockedValue { $0.most } }

    static func start(answer: @escaping @Sendable (HTTPRequestHead) -> Answer) async throws -> LoopbackServer {
        let (opened, closed, requests) = (EventLog<Void>(), EventLog<Void>(), EventLog<String>())
        let mostOpen = NIOLockedValueBox((now: 0, most: 0))
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                mostOpen.withLockedValue { $0 = (now: $0.now + 1, most: max($0.most, $0.now + 1)) }
                opened.append(())
                channel.closeFuture.whenComplete { _ in
                    mostOpen.withLockedValue { $0.now -= 1 }
                    closed.append(())
                }
                return channel.pipeline.configureHTTPServerPipeline().flatMap {
                    channel.pipeline.addHandler(Handler(answer: answer, requests: requests))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return LoopbackServer(port: channel.localAddress?.port ?? 0, channel: channel,
                              logs: (opened, closed, requests), mostOpen: mostOpen)
    }

    private init(port: Int, channel: any Channel, logs: (EventLog<Void>, EventLog<Void>, EventLog<String>),
                 mostOpen: NIOLockedValueBox<(now: Int, most: Int)>) {
        self.port = port
        self.channel = channel
        (opened, closed, requests) = logs
        self.mostOpen = mostOpen
    }

    func stop() async {
        try? await channel.close()
    }

    private final class Handler: ChannelInboundHandler, Sendable {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart

        let answer: @Sendable (HTTPRequestHead) -> Answer
        let requests: EventLog<String>

        init(answer: @escaping @Sendable (HTTPRequestHead) -> Answer, requests: EventLog<String>) {
            self.answer = answer
            self.requests = requests
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            guard case .head(let head) = unwrapInboundIn(data) else { return }
            requests.append(head.uri)
            guard case let .respond(status, headers, body) = answer(head) else { return }
            var responseHeaders = HTTPHeaders(headers)
            responseHeaders.replaceOrAdd(name: "Content-Length", value: "\(body.utf8.count)")
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status, headers: responseHeaders))), promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: body)))), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
    }
}
