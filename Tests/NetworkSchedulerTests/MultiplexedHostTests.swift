import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import NetworkScheduler
@testable import NetworkSchedulerMachine
import NetworkSchedulerTesting

/// A host's budget follows what its answers come over, through the scheduler: the version of
/// HTTP its transport reads (``ResponseHead/httpVersion``) makes it a budget of streams or of
/// connections.
@Suite struct MultiplexedHostTests {
    @Test func eachVersionATransportMaySayIsReadAsItsProtocol() {
        func spoken(_ version: String) -> HostProtocol? {
            ResponseHead(url: "https://api.test/", statusCode: 200, headerFields: [:], httpVersion: version).hostProtocol
        }
        let multiplexed = HostProtocol.multiplexed(maximumStreams: nil)

        #expect(["HTTP/1.1", "HTTP/1.0", "http/1.1"].map(spoken) == [.http1, .http1, .http1])
        #expect(["HTTP/2", "HTTP/2.0", "h2", "H2C", "h3", "HTTP/3"].map(spoken) == Array(repeating: multiplexed, count: 6))
        #expect(["", "SPDY/3", "h", "HTTP"].map(spoken) == [nil, nil, nil, nil])
    }

    /// URLSession on Linux never names the version: what the answer shows decides.
    @Test func anAnswerWithoutAVersionIsReadFromItsSchemeAndFields() throws {
        func shown(_ url: String, _ fields: [String: String]) throws -> HostProtocol? {
            let response = try #require(HTTPURLResponse(url: URL(string: url)!, statusCode: 200, httpVersion: "HTTP/2",
                                                        headerFields: fields))
            return ResponseHead(response).hostProtocol
        }
        let multiplexed = HostProtocol.multiplexed(maximumStreams: nil)

        #expect(try shown("https://api.test/", ["Content-Type": "application/json"]) == multiplexed)
        #expect(try shown("https://api.test/", ["connection": "keep-alive"]) == .http1)
        #expect(try shown("https://api.test/", ["Keep-Alive": "timeout=5"]) == .http1)
        #expect(try shown("https://api.test/", ["Transfer-Encoding": "chunked"]) == .http1)
        #expect(try shown("http://api.test/", [:]) == .http1, "cleartext is HTTP/2 only by prior knowledge")
        #expect(try shown("HTTPS://api.test/", [:]) == multiplexed)
        #expect(ResponseHead(url: "ftp://api.test/", statusCode: 200, headerFields: [:]).hostProtocol == nil)
        #expect(ResponseHead(url: "https://api.test/", statusCode: 200, headerFields: ["Connection": "close"]).hostProtocol
                == .http1)
    }

    /// An answer a redirect brought from another origin tells nothing of the host asked.
    @Test func anAnswerFromAnotherOriginTellsNothingOfTheHostAsked() throws {
        let overHTTP2 = ResponseHead(url: "https://api.test/v1/me", statusCode: 200, headerFields: [:], httpVersion: "HTTP/2")
        let multiplexed = HostProtocol.multiplexed(maximumStreams: nil)

        #expect(overHTTP2.hostProtocol(answering: "https://api.test/v1/me") == multiplexed)
        #expect(overHTTP2.hostProtocol(answering: "https://API.test:443/old") == multiplexed, "the same origin, spelt otherwise")
        #expect(overHTTP2.hostProtocol(answering: "http://api.test/v1/me") == nil, "sent on from cleartext to https")
        #expect(overHTTP2.hostProtocol(answering: "https://cdn.test/v1/me") == nil)
        #expect(overHTTP2.hostProtocol(answering: "https://api.test:8443/v1/me") == nil)
        #expect(overHTTP2.hostProtocol(answering: nil) == nil)

        // URLSession's head, whose URL is the last one it reached, read from what it shows.
        let response = try #require(HTTPURLResponse(url: URL(string: "https://api.test/v1/me")!, statusCode: 200,
                                                    httpVersion: "HTTP/2", headerFields: [:]))
        #expect(ResponseHead(response).hostProtocol(answering: "https://api.test/v1/me") == multiplexed)
        #expect(ResponseHead(response).hostProtocol(answering: "http://api.test/v1/me") == nil)
    }

    /// A scheduler of 2 connections and 10 streams per host, with 30 GETs held at the stub,
    /// whose answers say they came over `version`.
    private static func burst(over version: String) async -> Harness {
        let harness = Harness(budget: 2, slotsReservedAboveLowPriority: 0) { _ in .hold } configure: {
            $0.multiplexedHostBudget = 10
        }
        harness.transport.httpVersion = version
        for index in 0..<30 { harness.api.send(Resource<User>(path: "items/\(index)")) { _ in } }
        await harness.transport.arrivals.wait(for: 2)
        return harness
    }

    @Test func aHostThatAnswersOverHTTP2RunsABudgetOfStreams() async {
        let harness = await Self.burst(over: "HTTP/2")
        #expect(harness.scheduler.currentBudget(of: URL(string: "https://api.test")!) == 2, "connections until it is heard from")

        harness.transport.release(with: .json(userJSON))

        await harness.transport.arrivals.wait(for: 11)
        #expect(harness.scheduler.currentBudget(of: URL(string: "https://api.test")!) == 10)
        #expect(harness.transport.heldCount == 10)
        #expect(harness.transport.maxInFlight == 10)
        harness.scheduler.cancelAll()
    }

    @Test func itGoesBackToItsConnectionsWhenItAnswersOverHTTP1Again() async {
        let harness = await Self.burst(over: "HTTP/2")
        harness.transport.release(with: .json(userJSON))
        await harness.transport.arrivals.wait(for: 11)

        harness.transport.httpVersion = "HTTP/1.1"
        harness.transport.release(with: .json(userJSON))
        await harness.transport.answered.wait(for: 2)

        #expect(harness.scheduler.currentBudget(of: URL(string: "https://api.test")!) == 2)
        #expect(harness.transport.arrivals.count == 11, "9 still run, over a budget of 2: nothing starts")
        harness.scheduler.cancelAll()
    }

    @Test func aHostThatAnswersOverHTTP1KeepsItsConnections() async {
        let harness = await Self.burst(over: "HTTP/1.1")

        harness.transport.release(with: .json(userJSON))

        await harness.transport.arrivals.wait(for: 3)
        await harness.transport.answered.wait(for: 1)
        #expect(harness.scheduler.currentBudget(of: URL(string: "https://api.test")!) == 2)
        #expect(harness.transport.heldCount == 2)
        harness.scheduler.cancelAll()
    }
}
