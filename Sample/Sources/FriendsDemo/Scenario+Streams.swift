import Foundation
import NetworkScheduler
import SocialApp
import SocialServer

// Step 15: a live feed is a request like any other. It survives a cut connection, leaves the
// host's budget to the screen's calls, and ends with its screen.
extension Scenario {
    /// 15: the feed's first connection drops in the middle of a post; it reconnects with
    /// `Last-Event-ID`, and the reader sees each post once. A profile call meanwhile does not
    /// wait behind the open feed; a new post arrives live; the screen closes and the feed ends.
    func aLiveFeedEndsWithItsScreen() async throws {
        narrator.step(15, Self.steps[14])
        var ids: [Post.ID] = []
        for text in ["at the beach", "at the museum", "at dinner"] {
            ids.append(try await api.posts.create(PostDraft(text: "Ada is \(text) (\(UUID().uuidString.prefix(4)))")).value.id)
        }
        let connectionsBefore = server?.arrivals.count(.liveFeed) ?? 0
        // The first connection is cut about 100 bytes in: in the middle of the second post.
        server?.faults[.liveFeed] = Fault(failFirst: 1, cutAfterBytes: 100)
        defer { server?.faults[.liveFeed] = nil }
        let screen = RequestGroup()
        let feed = api.posts.liveFeed(after: ids[0] - 1, group: screen)
        var reader = feed.makeAsyncIterator()

        var seen: [Post] = []
        while seen.count < 3, let event = try await reader.next() {
            if let post = Post(event: event) { seen.append(post) }
        }
        narrator.say("   the feed delivered: " + seen.map { "#\($0.id)" }.joined(separator: ", "))
        if let server {
            let connections = server.arrivals.count(.liveFeed) - connectionsBefore
            narrator.say("   the server saw \(connections) connections: the second asked for what followed the last post seen")
            narrator.check(connections == 2, "the cut connection was reopened")
        }
        narrator.check(seen.map(\.id) == ids, "each post arrived once, in order, across the cut")

        let profile = try await api.client.reply(for: .me, priority: .high)
        narrator.say("   a profile call while the feed is open waited \(String(format: "%.1f ms", profile.metrics.queuedDuration * 1_000)) in line")
        narrator.check(profile.metrics.queuedDuration < profile.metrics.networkDuration,
                       "the open feed holds a stream slot, not one of the host's request slots")

        let live = try await api.posts.create(PostDraft(text: "Ada is home (\(UUID().uuidString.prefix(4)))")).value
        var arrived: Post?
        while arrived == nil, let event = try await reader.next() { arrived = Post(event: event) }
        narrator.check(arrived?.id == live.id, "a post created now arrived live")

        screen.cancelAll()
        var ended: ServiceError?
        do {
            _ = try await reader.next()
        } catch {
            ended = error
        }
        narrator.say("   the screen closed: the feed ended with \(ended.map { "\($0.caseName)" } ?? "nothing")")
        narrator.check(ended == .cancelled, "the feed ended with its screen")
    }
}
