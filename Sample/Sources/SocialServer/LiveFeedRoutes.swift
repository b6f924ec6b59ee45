import Foundation
import Hummingbird
import NIOConcurrencyHelpers
import NIOCore

extension SocialRoutes {
    /// `GET /feed/live`: the posts created from now on, as server-sent events (`event: post`,
    /// the post's JSON as `data`, its ID as `id`), with a `: keep-alive` comment each second
    /// without one. A `Last-Event-ID` (or `?after=ID`) sends the posts after that one first.
    /// `?limit=N` ends the stream after N events. Faults cut it after `cutAfterBytes` bytes, in
    /// the middle of an event, or send one endless line (`endlessLine`).
    func addLiveFeedRoutes(to router: Router<Context>) {
        router.get("/feed/live") { request, context in
            await handle(.liveFeed, request, context) { _ in
                let after = request.headers[.init("Last-Event-ID")!].flatMap(Int.init)
                    ?? request.uri.queryParameters.get("after", as: Int.self) ?? 0
                let limit = request.uri.queryParameters.get("limit", as: Int.self)
                let fault = Fault.taken
                return Response(status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "no-cache"],
                                body: ResponseBody { writer in
                                    if fault?.endlessLine == true {
                                        try await Self.writeEndlessLine(to: &writer)
                                        return
                                    }
                                    var feed = LiveFeedWriter(lastID: after, limit: limit, cutAfterBytes: fault?.cutAfterBytes)
                                    try await feed.run(store: store, feeds: liveFeeds, writer: &writer)
                                    try await writer.finish(nil)
                                })
            }
        }
    }

    /// `data: ` and then 100 MB of one line, which a client must refuse long before its end.
    private static func writeEndlessLine(to writer: inout some ResponseBodyWriter) async throws {
        let block = ByteBuffer(repeating: UInt8(ascii: "x"), count: 64 * 1_024)
        try await writer.write(ByteBuffer(string: "data: "))
        for _ in 0..<1_600 { try await writer.write(block) }
        try await writer.finish(nil)
    }
}

/// One live feed's loop: polls the store for new posts and writes them as events.
private struct LiveFeedWriter {
    var lastID: Int
    let limit: Int?
    var cutAfterBytes: Int?
    var sent = 0

    struct CutShort: Error {}

    mutating func run(store: SocialStore, feeds: LiveFeeds, writer: inout some ResponseBodyWriter) async throws {
        try await writer.write(ByteBuffer(string: "retry: 100\n\n"))
        var quietRounds = 0
        // Bounded: a feed nobody closes ends with the server, or after a minute.
        for _ in 0..<3_000 where !feeds.isClosing {
            let posts = await store.posts(after: lastID)
            for post in posts {
                let json = String(decoding: Reply.encode(post), as: UTF8.self)
                try await write("id: \(post.id)\nevent: post\ndata: \(json)\n\n", to: &writer)
                lastID = post.id
                sent += 1
                if let limit, sent >= limit { return }
            }
            quietRounds = posts.isEmpty ? quietRounds + 1 : 0
            if quietRounds == 50 {
                try await write(": keep-alive\n\n", to: &writer)
                quietRounds = 0
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    private mutating func write(_ text: String, to writer: inout some ResponseBodyWriter) async throws {
        let bytes = Array(text.utf8)
        if let left = cutAfterBytes {
            guard bytes.count <= left else {
                try await writer.write(ByteBuffer(bytes: bytes.prefix(left)))
                throw CutShort()
            }
            cutAfterBytes = left - bytes.count
        }
        try await writer.write(ByteBuffer(bytes: bytes))
    }
}

/// Whether the server is stopping: open feeds then end, so that a graceful stop does not wait
/// for streams that never end.
final class LiveFeeds: Sendable {
    private let closing = NIOLockedValueBox(false)

    var isClosing: Bool { closing.withLockedValue { $0 } }

    func close() {
        closing.withLockedValue { $0 = true }
    }
}
