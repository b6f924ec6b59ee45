import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import NetworkScheduler
import NetworkSchedulerTesting

/// A draft whose tags are a set: two equal drafts built apart iterate their tags differently.
struct TaggedDraft: Codable, Sendable, Equatable {
    let text: String
    let tags: Set<String>
    let scores: [UUID: Int]
    let nested: [String: Set<Int>]
}

/// An app's encoder that wraps every body in `{"data": …}`.
final class WrappingEncoder: JSONEncoder, @unchecked Sendable {
    // Safety: no state of its own; JSONEncoder's settings are used as Foundation allows.
    private struct Envelope<Value: Encodable>: Encodable { let data: Value }

    override func encode<Value: Encodable>(_ value: Value) throws -> Data {
        try super.encode(Envelope(data: value))
    }
}

/// Bodies count by value: equal values are one call whatever their sets' and dictionaries'
/// order, unequal ones never are, and the app's encoder (a subclass included) writes them.
@Suite struct BodyIdentityTests {
    static let tags = ["swift", "linux", "news", "ios", "server", "open", "source", "async"]
    static let scoreKeys = (0..<6).map { _ in UUID() }

    /// A draft equal to every other this makes, its collections built anew in another order.
    static func freshDraft(_ seed: Int) -> TaggedDraft {
        var tags = Set<String>(minimumCapacity: seed % 7)
        for tag in Self.tags.shuffled() { tags.insert(tag) }
        var scores: [UUID: Int] = [:]
        for (index, key) in Self.scoreKeys.enumerated().shuffled() { scores[key] = index }
        return TaggedDraft(text: "hello", tags: tags, scores: scores,
                           nested: ["b": Set((0..<20).shuffled()), "a": Set([3, 1, 2])])
    }

    /// How many calls reach the transport for `count` held POSTs of `body(index)`.
    private func networkCalls(_ count: Int, body: (Int) -> EndpointBody) async -> (calls: Int, bodies: [Data]) {
        let harness = Harness { _ in .hold }
        let outcomes = Outcomes<Data>()
        for index in 0..<count {
            harness.api.send(Resource<Data>(.post, path: "drafts", body: body(index), decoding: .data),
                             completion: outcomes.completion("\(index)"))
        }
        // Released one at a time: no more than the host's budget are on the wire at once.
        for released in 0..<harness.scheduler.census.networkCalls {
            await harness.transport.arrivals.wait(for: released + 1)
            #expect(harness.transport.release(with: .json("{}")))
        }
        #expect(await outcomes.wait(for: count).count == count)
        return (harness.transport.arrivals.count, harness.transport.arrivals.elements.compactMap(\.body))
    }

    @Test func fiftyTapsOfAnEqualDraftWithSetsAndUUIDKeysPostOnce() async throws {
        let drafts = (0..<50).map(Self.freshDraft)
        #expect(Set(drafts.map { try! JSONEncoder.sortingKeys.encode($0) }).count > 1,
                "the plain encoder writes equal drafts differently, or this test shows nothing")

        let (calls, bodies) = await networkCalls(50) { .json(drafts[$0]) }

        #expect(calls == 1)
        #expect(try JSONDecoder().decode(TaggedDraft.self, from: bodies[0]) == drafts[0])
    }

    @Test(arguments: ["app's encoder", "an encoder per request", "unsorted encoder", "subclass"])
    func equalDraftsShareOneCallWhateverTheEncoder(encoder kind: String) async {
        let shared = JSONEncoder()
        shared.outputFormatting = .sortedKeys
        func encoder() -> JSONEncoder {
            switch kind {
            case "app's encoder": return shared
            case "an encoder per request":
                let encoder = JSONEncoder()
                encoder.outputFormatting = .sortedKeys
                return encoder
            case "unsorted encoder": return JSONEncoder()
            default: return WrappingEncoder()
            }
        }
        let (calls, _) = await networkCalls(40) { .json(Self.freshDraft($0), encoder: encoder()) }
        #expect(calls == 1)
    }

    @Test func unequalValuesNeverShareACall() async {
        struct Fresh: Encodable, Sendable { let id = UUID(); let tags: Set<String> = ["a", "b"] }
        let (calls, bodies) = await networkCalls(200) { _ in .json(Fresh()) }
        #expect(calls == 200)
        #expect(Set(bodies).count == 200)
    }

    @Test func anEncoderSubclassWritesWhatIsSent() async throws {
        struct Value: Encodable, Sendable { let k: Int }
        let (_, bodies) = await networkCalls(1) { _ in .json(Value(k: 1), encoder: WrappingEncoder()) }
        #expect(bodies == [Data(#"{"data":{"k":1}}"#.utf8)])
    }

    @Test(arguments: [false, true])
    func theEncoderIsReadAsItIsWhenTheBodyIsMade(sortsKeys: Bool) async throws {
        struct Stamped: Encodable, Sendable { let at: Date }
        let encoder = JSONEncoder()
        if sortsKeys { encoder.outputFormatting = .sortedKeys }
        encoder.dateEncodingStrategy = .secondsSince1970
        let body = EndpointBody.json(Stamped(at: Date(timeIntervalSince1970: 10)), encoder: encoder)
        // Changed afterwards: the body was made with the encoder as it was.
        encoder.dateEncodingStrategy = .iso8601
        let (_, bodies) = await networkCalls(1) { _ in body }
        #expect(bodies == [Data(#"{"at":10}"#.utf8)])
    }

    @Test func theAppsEncoderKeepsItsStrategiesForWhatIsInsideASet() throws {
        struct Event: Codable, Sendable, Hashable { let at: Date; let payload: Data }
        struct Batch: Codable, Sendable { let events: Set<Event>; let named: [String: Date] }
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.dataEncodingStrategy = .custom { data, encoder in
            var container = encoder.singleValueContainer()
            try container.encode("hex:" + data.map { String(format: "%02x", $0) }.joined())
        }
        encoder.keyEncodingStrategy = .convertToSnakeCase
        let batch = Batch(events: [Event(at: Date(timeIntervalSince1970: 0), payload: Data([1, 2])),
                                   Event(at: Date(timeIntervalSince1970: 60), payload: Data([3]))],
                          named: ["firstSeen": Date(timeIntervalSince1970: 0)])
        let sent = try CanonicalJSON.encode(batch, with: encoder)
        let text = String(decoding: sent, as: UTF8.self)
        // The set in the order of its elements' own canonical JSON (dates as seconds, so the
        // later one first), each written with the app's strategies.
        #expect(text == #"{"events":[{"at":"1970-01-01T00:01:00Z","payload":"hex:03"},"#
            + #"{"at":"1970-01-01T00:00:00Z","payload":"hex:0102"}],"named":{"firstSeen":"1970-01-01T00:00:00Z"}}"#)
        let rebuilt = Batch(events: Set(batch.events.reversed()), named: batch.named)
        #expect(try CanonicalJSON.encode(rebuilt, with: encoder) == sent)
    }

    @Test func anUnsortedEncodersMembersAreSortedTokenByToken() throws {
        let json = Data(#"{"b": [1, {"z": 1.50, "a": "\"x\\"}], "a": null, "c": {}}"#.utf8)
        #expect(JSONMemberOrder.sorted(json) == Data(#"{"a":null,"b":[1,{"a":"\"x\\","z":1.50}],"c":{}}"#.utf8))
        #expect(JSONMemberOrder.sorted(Data("not json {".utf8)) == nil)
        #expect(JSONMemberOrder.sorted(Data(#"{"a":1} trailing"#.utf8)) == nil)
    }

    // MARK: - Files

    private static func file(_ content: String) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("BodyIdentity-\(UUID().uuidString)")
        try Data(content.utf8).write(to: url)
        return url
    }

    @Test func equalFilesAtDifferentPathsShareOneCall() async throws {
        let files = try (0..<5).map { _ in try Self.file("the same upload") }
        defer { for file in files { try? FileManager.default.removeItem(at: file) } }
        let (calls, _) = await networkCalls(5) { .file(files[$0]) }
        #expect(calls == 1)
    }

    @Test func filesOfEqualSizeAndTimeButOtherContentNeverShare() async throws {
        let (first, second) = (try Self.file("content A"), try Self.file("content B"))
        defer { for file in [first, second] { try? FileManager.default.removeItem(at: file) } }
        let time = Date(timeIntervalSince1970: 1_700_000_000)
        for file in [first, second] { try FileManager.default.setAttributes([.modificationDate: time], ofItemAtPath: file.path) }
        let (calls, _) = await networkCalls(2) { .file([first, second][$0]) }
        #expect(calls == 2)
    }

    @Test func aFileRewrittenInPlaceIsAnotherBody() async throws {
        let file = try Self.file("first version")
        defer { try? FileManager.default.removeItem(at: file) }
        let first = try EndpointBody.file(file).makeBody()
        try Data("second version".utf8).write(to: file)
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: 5)], ofItemAtPath: file.path)
        let second = try EndpointBody.file(file).makeBody()
        #expect(first.identity != second.identity)
        #expect(try EndpointBody.file(file).makeBody().identity == second.identity)
    }

    @Test func aTemporaryFileOutlivesItsCallerWhileItsSharedCallGoesOn() async throws {
        let harness = Harness { _ in .hold }
        let (first, second) = (try Self.file("spooled"), try Self.file("spooled"))
        let outcomes = Outcomes<Data>()
        do {
            let leaving = harness.api.send(Resource<Data>(.post, path: "uploads", body: .temporaryFile(first), decoding: .data),
                                           completion: outcomes.completion("leaving"))
            // Kept, as an app may keep its handles: an ended caller's handle holds no file.
            let staying = harness.api.send(Resource<Data>(.post, path: "uploads", body: .temporaryFile(second), decoding: .data),
                                           completion: outcomes.completion("staying"))
            await harness.transport.arrivals.wait(for: 1)
            leaving.cancel()
            #expect(await outcomes.log.wait(for: 1).first?.result.failure == .cancelled)

            // The call sends the first caller's file, which is still there for the one who stayed.
            #expect(FileManager.default.fileExists(atPath: first.path))
            #expect(harness.transport.release(with: .json("{}")))
            #expect(await outcomes.wait(for: 2)["staying"]?.success == Data("{}".utf8))
            #expect(harness.transport.arrivals.count == 1)
            // Let go as the caller ended, before its completion ran.
            #expect(!FileManager.default.fileExists(atPath: second.path), "the joiner's file is removed with its caller")
            withExtendedLifetime((leaving, staying)) {}
        }
        // Once the last attempt's operation has reported its end, nothing holds the sent file.
        await harness.scheduler.queuesDrained()
        #expect(!FileManager.default.fileExists(atPath: first.path), "the sent file is removed once no call needs it")
    }
}
