import Foundation
import Testing
@testable import NetworkScheduler
import NetworkSchedulerTesting

@Suite struct SchedulerDeduplicationTests {
    @Test func joiningCallerGetsSharedResultWithoutSecondNetworkCall() async throws {
        let harness = Harness { _ in .hold }
        let results = EventLog<Result<Reply<User>, ServiceError>>()
        let request = harness.api.resolve(Resource<User>(path: "users/1"))

        harness.scheduler.sendForReply(request) { results.append($0) }
        await harness.transport.arrivals.wait(for: 1)
        harness.scheduler.sendForReply(request) { results.append($0) }
        harness.transport.release(with: .json(userJSON))

        let delivered = await results.wait(for: 2)
        #expect(harness.transport.arrivals.count == 1)
        #expect(delivered.count == 2)
        for result in delivered {
            let response = try result.get()
            #expect(response.value.name == "Ada")
            #expect(response.wasShared)
        }
        #expect(harness.metrics.snapshot.deduplicated == 1)
    }

    @Test func identicalPostsFromTwoScreensMakeOneNetworkCall() async throws {
        let harness = Harness { _ in .hold }
        let outcomes = Outcomes<User>()
        let create = Resource<User>(.post, path: "posts", body: .json(NewPost(text: "hello")))

        let screenA = RequestGroup()
        let screenB = RequestGroup()
        harness.api.send(create, group: screenA, completion: outcomes.completion("screen A"))
        harness.api.send(create, group: screenB, completion: outcomes.completion("screen B"))
        await harness.transport.arrivals.wait(for: 1)
        harness.transport.release(with: .json(userJSON, status: 201))

        let results = await outcomes.wait(for: 2)
        #expect(harness.transport.arrivals.count == 1)
        #expect(results["screen A"]?.success == results["screen B"]?.success)
        #expect(results["screen A"]?.success?.id == 1)
        withExtendedLifetime((screenA, screenB)) {}
    }

    /// The design card's promise for a real model: its JSON keys come out of Foundation's
    /// encoder in a varying order on Linux, and 200 sends of it once made 62–65 calls.
    @Test func identicalPostsOfAManyFieldModelFromThreadsAndTasksMakeOneNetworkCall() async throws {
        // Given a host whose only slot the first call holds, so that every send overlaps it.
        let harness = Harness(budget: 1) { _ in .hold }
        let outcomes = Outcomes<User>()
        let create: @Sendable () -> Resource<User> = { Resource(.post, path: "posts", body: .json(RichDraft.sample)) }

        // When 100 threads and 100 tasks send the same draft, each encoding it itself.
        DispatchQueue.concurrentPerform(iterations: 100) { index in
            harness.api.send(create(), completion: outcomes.completion("thread \(index)"))
        }
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<100 {
                group.addTask { harness.api.send(create(), completion: outcomes.completion("task \(index)")) }
            }
        }

        // Then they are the callers of one call, which reaches the transport once.
        #expect(harness.scheduler.census.callers == 200)
        #expect(harness.scheduler.census.networkCalls == 1)
        await harness.transport.arrivals.wait(for: 1)
        harness.transport.release(with: .json(userJSON, status: 201))
        let results = await outcomes.wait(for: 200)
        #expect(results.values.allSatisfy { $0.success?.id == 1 })
        #expect(harness.transport.arrivals.count == 1)
        #expect(harness.metrics.snapshot.deduplicated == 199)
    }

    /// An adapter may add a user's token as the request goes: two clients' adapters may send
    /// one request as two users', so their callers never share a call; one adapter's do when
    /// it states the same identity.
    @Test func requestsOfDifferentAdaptersNeverShareACall() async throws {
        let harness = Harness { _ in .hold }
        func adapted(_ token: String) -> APIClient {
            var client = APIClient(baseURL: SchedulerSteeringTests.base, scheduler: harness.scheduler)
            client.requestAdapter = RequestAdapter(identity: { token }) { request in
                var request = request
                request.setValue(token, forHTTPHeaderField: "Authorization")
                return request
            }
            return client
        }
        let (grace, alan) = (adapted("Bearer grace"), adapted("Bearer alan"))
        let outcomes = Outcomes<User>()
        grace.send(Resource<User>(path: "me"), completion: outcomes.completion("grace"))
        grace.send(Resource<User>(path: "me"), completion: outcomes.completion("grace again"))
        alan.send(Resource<User>(path: "me"), completion: outcomes.completion("alan"))

        let arrivals = await harness.transport.arrivals.wait(for: 2)
        #expect(Set(arrivals.map { $0.request.value(forHTTPHeaderField: "Authorization") }) == ["Bearer grace", "Bearer alan"])
        #expect(harness.scheduler.census.networkCalls == 2)
        while harness.transport.release(with: .json(userJSON)) {}
        #expect(await outcomes.wait(for: 3).count == 3)
    }

    struct Pair: Sendable, CustomTestStringConvertible {
        let label: String
        let first: Resource<User>
        let second: Resource<User>
        init(_ label: String, _ first: Resource<User>, _ second: Resource<User>) {
            (self.label, self.first, self.second) = (label, first, second)
        }
        var testDescription: String { label }
    }

    @Test(arguments: [
        Pair("different bodies", Resource<User>(.post, path: "posts", body: .json(NewPost(text: "a"))),
         Resource<User>(.post, path: "posts", body: .json(NewPost(text: "b")))),
        Pair("different methods", Resource<User>(.put, path: "posts/1", body: .json(NewPost(text: "a"))),
         Resource<User>(.patch, path: "posts/1", body: .json(NewPost(text: "a")))),
        Pair("different Authorization", Resource<User>(path: "me", headers: ["Authorization": "Bearer one"]),
         Resource<User>(path: "me", headers: ["Authorization": "Bearer two"])),
        Pair("different Accept", Resource<User>(path: "me", headers: ["Accept": "application/json"]),
         Resource<User>(path: "me", headers: ["Accept": "text/plain"])),
        Pair("different Idempotency-Key", Resource<User>(.post, path: "posts", headers: ["Idempotency-Key": "1"]),
         Resource<User>(.post, path: "posts", headers: ["Idempotency-Key": "2"])),
        Pair("different queries", Resource<User>(path: "feed", query: [URLQueryItem(name: "page", value: "1")]),
         Resource<User>(path: "feed", query: [URLQueryItem(name: "page", value: "2")])),
        Pair("opted out", Resource<User>(path: "me", deduplication: .disabled),
         Resource<User>(path: "me", deduplication: .disabled)),
    ])
    func requestsThatDifferInMeaningAreNotShared(_ pair: Pair) async {
        let harness = Harness { _ in .hold }
        let outcomes = Outcomes<User>()

        harness.api.send(pair.first, completion: outcomes.completion("first"))
        harness.api.send(pair.second, completion: outcomes.completion("second"))

        let arrivals = await harness.transport.arrivals.wait(for: 2)
        #expect(arrivals.count == 2, "\(pair.label) must not share a call")
        while harness.transport.release(with: .json(userJSON)) {}
        #expect(await outcomes.wait(for: 2).count == 2)
    }

    @Test func tracingHeadersDoNotKeepRequestsFromSharing() async {
        let harness = Harness { _ in .hold }
        let outcomes = Outcomes<User>()
        harness.api.send(Resource<User>(path: "me", headers: ["traceparent": "00-1-1-01"]), completion: outcomes.completion("a"))
        harness.api.send(Resource<User>(path: "me", headers: ["traceparent": "00-2-2-01"]), completion: outcomes.completion("b"))
        await harness.transport.arrivals.wait(for: 1)
        harness.transport.release(with: .json(userJSON))

        #expect(await outcomes.wait(for: 2).count == 2)
        #expect(harness.transport.arrivals.count == 1)
    }

    @Test func customKeySharesRequestsThatOtherwiseDiffer() async {
        let harness = Harness { _ in .hold }
        let outcomes = Outcomes<User>()
        harness.api.send(Resource<User>(path: "me", query: [URLQueryItem(name: "t", value: "1")], deduplication: .key("me")),
                         completion: outcomes.completion("a"))
        harness.api.send(Resource<User>(path: "me", query: [URLQueryItem(name: "t", value: "2")], deduplication: .key("me")),
                         completion: outcomes.completion("b"))
        await harness.transport.arrivals.wait(for: 1)
        harness.transport.release(with: .json(userJSON))

        #expect(await outcomes.wait(for: 2).count == 2)
        #expect(harness.transport.arrivals.count == 1)
    }

    @Test func twoModelTypesOnOneURLEachDecodeTheSharedResponse() async throws {
        let harness = Harness { _ in .hold }
        let users = Outcomes<User>()
        let names = Outcomes<UserName>()
        let raw = Outcomes<Data>()
        harness.api.send(Resource<User>(path: "users/1"), completion: users.completion("user"))
        harness.api.send(Resource<UserName>(path: "users/1"), completion: names.completion("name"))
        harness.api.send(Resource<Data>(path: "users/1", decoding: .data), completion: raw.completion("raw"))
        await harness.transport.arrivals.wait(for: 1)
        harness.transport.release(with: .json(userJSON))

        #expect(try await users.wait(for: 1)["user"]?.get() == User(id: 1, name: "Ada", email: "ada@example.com"))
        #expect(try await names.wait(for: 1)["name"]?.get() == UserName(name: "Ada"))
        #expect(try await raw.wait(for: 1)["raw"]?.get() == Data(userJSON.utf8))
        #expect(harness.transport.arrivals.count == 1)
    }

    @Test func joinersOfOneModelTypeShareOneDecode() async throws {
        let harness = Harness { _ in .hold }
        let decodes = Counter()
        let decoder = JSONDecoder()
        decoder.userInfo[CountedUser.counterKey] = decodes
        let counted = Outcomes<CountedUser>()
        let users = Outcomes<User>()
        for caller in 0..<5 {
            harness.api.send(Resource<CountedUser>(path: "users/1", decoder: decoder), completion: counted.completion("\(caller)"))
        }
        harness.api.send(Resource<User>(path: "users/1"), completion: users.completion("user"))
        await harness.transport.arrivals.wait(for: 1)
        harness.transport.release(with: .json(userJSON))

        let results = await counted.wait(for: 5)
        #expect(results.count == 5)
        for result in results.values { #expect(try result.get().name == "Ada") }
        #expect(try await users.wait(for: 1)["user"]?.get().name == "Ada")
        #expect(decodes.count == 1, "five joiners reading one response the same way decode it once")
        #expect(harness.transport.arrivals.count == 1)
    }

    @Test func joinersWithTheirOwnDecodersOrClosuresDecodeSeparately() async throws {
        let harness = Harness { _ in .hold }
        let decodes = Counter()
        let outcomes = Outcomes<CountedUser>()
        for caller in 0..<2 {
            let decoder = JSONDecoder()
            decoder.userInfo[CountedUser.counterKey] = decodes
            harness.api.send(Resource<CountedUser>(path: "users/1", decoder: decoder), completion: outcomes.completion("own \(caller)"))
        }
        let decoder = JSONDecoder()
        decoder.userInfo[CountedUser.counterKey] = decodes
        for caller in 0..<2 {
            let custom = ResponseDecoding<CountedUser>.custom { data, _ in try decoder.decode(CountedUser.self, from: data) }
            harness.api.send(Resource(path: "users/1", decoding: custom), completion: outcomes.completion("custom \(caller)"))
        }
        await harness.transport.arrivals.wait(for: 1)
        harness.transport.release(with: .json(userJSON))

        #expect(await outcomes.wait(for: 4).count == 4)
        #expect(decodes.count == 4)
    }

    /// The statuses a resource accepts are the one rule by which its attempts are read (retries,
    /// host health, dependents): a resource that accepts others reads the answer its own way
    /// only through a call of its own.
    @Test func aResourceThatAcceptsOtherStatusesGetsACallOfItsOwn() async {
        let harness = Harness { _ in .hold }
        let strict = Outcomes<Void>()
        let lenient = Outcomes<Void>()
        harness.api.send(Resource<Void>(path: "ping"), completion: strict.completion("strict"))
        harness.api.send(Resource<Void>(path: "ping", acceptableStatusCodes: 200..<500), completion: lenient.completion("lenient"))
        await harness.transport.arrivals.wait(for: 2)
        harness.transport.stopHolding(answering: .json(#"{"message": "gone"}"#, status: 410))

        #expect(await strict.wait(for: 1)["strict"]?.failure?.statusCode == 410)
        #expect(await lenient.wait(for: 1)["lenient"]?.success != nil)
    }

    @Test func requestsThatDoNotOverlapInTimeMakeTheirOwnCalls() async throws {
        let harness = Harness()
        let request = harness.api.resolve(Resource<User>(path: "users/1"))
        let first = try await harness.scheduler.reply(for: request)
        let second = try await harness.scheduler.reply(for: request)

        #expect(harness.transport.arrivals.count == 2)
        #expect(!first.wasShared && !second.wasShared)
    }
}
