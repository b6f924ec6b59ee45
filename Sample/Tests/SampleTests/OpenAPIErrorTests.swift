import Foundation
import NetworkScheduler
import NetworkSchedulerOpenAPI
import OpenAPIRuntime
import SocialApp
@testable import SocialOpenAPI
import SocialServer
import Testing

/// What a generated client throws when the scheduler fails its call, over each transport: the
/// rule *Using an OpenAPI Client* states. While an operation is sent the runtime wraps the
/// error in a `ClientError`; while a streamed body is read it comes as it is. In every case
/// `ServiceError(unwrapping:)` gives the scheduler's error.
@Suite struct OpenAPIErrorTests {
    private static func client(_ fixture: Fixture) -> Client {
        Client(serverURL: fixture.server.baseURL, transport: SchedulerClientTransport(client: fixture.api.client))
    }

    /// What `operation` threw, or nil (with an issue recorded) if it threw nothing.
    private static func thrown(by operation: Task<some Sendable, any Error>) async -> (any Error)? {
        do {
            _ = try await operation.value
            Issue.record("nothing was thrown")
            return nil
        } catch {
            return error
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aRefusedConnectionIsAClientErrorHoldingCannotConnect(over transport: TransportKind) async throws {
        let refusing = try RefusingPort()
        let url = URL(string: "http://127.0.0.1:\(refusing.port)")!
        let (made, shutDown) = transport.make()
        let api = SocialAPI(baseURL: url, configuration: .init(transport: made, retryPolicy: .never))
        let client = Client(serverURL: url, transport: SchedulerClientTransport(client: api.client))

        let error = await Self.thrown(by: Task { try await client.getFeed() })
        await shutDown()
        withExtendedLifetime(refusing) {}

        #expect(error is ClientError)
        guard case .cannotConnect(let urlError)? = error.flatMap(ServiceError.init(unwrapping:)) else {
            Issue.record("expected cannotConnect, got \(String(describing: error))")
            return
        }
        #expect(urlError.code == .cannotConnectToHost)
    }

    @Test(arguments: TransportKind.allCases)
    func aCallCancelledWhileItWaitsInItsLineIsAClientErrorHoldingCancelled(over transport: TransportKind) async throws {
        let tally = Tally()
        try await Fixture.with(over: transport, budget: 1, eventMonitors: [tally]) { fixture in
            let client = Self.client(fixture)
            let releaseTheSlot = try await fixture.logInAndHoldTheOnlySlot()

            let feed = Task { try await client.getFeed() }
            #expect(await tally.admitted.wait(for: 3) == 3) // the login, the held call, the feed
            feed.cancel()
            let error = await Self.thrown(by: feed)
            try await releaseTheSlot()

            #expect(error is ClientError)
            #expect(error.flatMap(ServiceError.init(unwrapping:)) == .cancelled)
            #expect(fixture.server.arrivals.count(.feed) == 0)
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aCallCancelledOnTheWireIsAClientErrorHoldingCancelled(over transport: TransportKind) async throws {
        try await Fixture.with(over: transport) { fixture in
            let client = Self.client(fixture)
            _ = try await fixture.logIn()
            fixture.server.faults.hold(.feed)
            defer { fixture.server.faults.release(.feed) }

            let feed = Task { try await client.getFeed() }
            #expect(await fixture.server.arrivals.wait(for: 1, at: .feed))
            feed.cancel()
            let error = await Self.thrown(by: feed)

            #expect(error is ClientError)
            #expect(error.flatMap(ServiceError.init(unwrapping:)) == .cancelled)
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aStreamedBodyCancelledMidwayThrowsCancelledAsItIs(over transport: TransportKind) async throws {
        try await Fixture.with(over: transport) { fixture in
            let client = Self.client(fixture)
            _ = try await fixture.logIn()
            let screen = RequestGroup()
            // 64 KiB every 100 ms: the body is still coming when its reader cancels.
            fixture.server.faults[.export] = Fault(bodyPauseMilliseconds: 100)

            // 64 MiB: far more than the stream buffers before its reader takes some.
            let export = Task {
                let body = try await withScheduling(group: screen) {
                    try await client.getExport(path: .init(name: "all"), query: .init(bytes: 64 << 20)).ok.body.binary
                }
                var first = true
                for try await _ in body where first {
                    first = false
                    screen.cancelAll()
                }
            }
            let error = await Self.thrown(by: export)

            #expect(error is ServiceError)
            #expect(error.flatMap(ServiceError.init(unwrapping:)) == .cancelled)
        }
    }

    @Test func anErrorThatIsNotTheSchedulersIsNotUnwrapped() {
        let decoding = DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "not JSON"))
        let wrapped = ClientError(operationID: "getFeed", operationInput: "", causeDescription: "Unknown",
                                  underlyingError: decoding)
        #expect(ServiceError(unwrapping: wrapped) == nil)
        #expect(ServiceError(unwrapping: decoding) == nil)
        #expect(ServiceError(unwrapping: CancellationError()) == .cancelled)
        let twice = ClientError(operationID: "getFeed", operationInput: "", causeDescription: "Unknown",
                                underlyingError: ClientError(operationID: "getFeed", operationInput: "", causeDescription: "",
                                                             underlyingError: ServiceError.timedOut))
        #expect(ServiceError(unwrapping: twice) == .timedOut)
    }
}
