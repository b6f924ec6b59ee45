import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NetworkScheduler
import NetworkSchedulerAsyncHTTPClient
import NIOConcurrencyHelpers
import SocialApp
import SocialServer
import Testing

extension HeavyTests {
    /// A server that misbehaves on purpose, through each real transport: each fault ends in
    /// a typed error or a correct result, within a bound, with no credential leaving its origin and
    /// no user's answer reaching another, and the process alive. One test at a time: the gzip
    /// bombs are measured by the peak memory of the whole process.
    @Suite struct HostileServerTests {
        /// What the echo route answers: the headers it received, with lower-cased names.
        private typealias EchoedHeaders = [String: String]

        /// Runs `body` and fails the test if it has not finished within `seconds`: no fault may
        /// leave a caller waiting. The body's outcome or the deadline, whichever comes first.
        private func bounded<Value: Sendable>(
            _ seconds: Double = 20,
            _ body: @escaping @Sendable () async throws -> Value
        ) async -> Result<Value, ServiceError>? {
            let outcome = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Value, ServiceError>?, Never>) in
                // Whoever takes the continuation first resumes it: the body, or the deadline.
                let waiting = NIOLockedValueBox<CheckedContinuation<Result<Value, ServiceError>?, Never>?>(continuation)
                let task = Task {
                    let outcome: Result<Value, ServiceError>
                    do { outcome = .success(try await body()) } catch { outcome = .failure(ServiceError(error)) }
                    waiting.withLockedValue { $0.take() }?.resume(returning: outcome)
                }
                DispatchQueue.global().asyncAfter(deadline: .now() + seconds) {
                    guard let continuation = waiting.withLockedValue({ $0.take() }) else { return }
                    task.cancel()
                    continuation.resume(returning: nil)
                }
            }
            if outcome == nil { Issue.record("no outcome within \(seconds) s") }
            return outcome
        }

        /// A client of the fixture's server, logged in as Ada, without a token refresh: a 401 is
        /// the answer here, not a reason to log in again.
        private func client(_ fixture: Fixture, defaultHeaders: HeaderFields? = nil) async throws -> APIClient {
            let session = try await fixture.logIn()
            return APIClient(baseURL: fixture.server.baseURL, scheduler: fixture.api.scheduler,
                             defaultHeaders: defaultHeaders ?? ["Accept": "application/json", "X-Api-Key": "ada-key"],
                             bearerToken: { session.token })
        }

        // MARK: - Redirects

        @Test(arguments: TransportKind.allCases)
        func aRedirectToAnotherOriginArrivesWithoutTheTokenCookiesOrClientHeaders(over transport: TransportKind) async throws {
            let other = try await SocialServer.start()
            defer { Task { await other.stop() } }
            try await Fixture.with(over: transport) { fixture in
                let api = try await client(fixture)
                fixture.server.faults[.me] = Fault(redirectLocation: "\(other.baseURL.absoluteString)/echo")
                let echo = Resource<EchoedHeaders>(path: "me", headers: ["Cookie": "session=ada-cookie"])

                let echoed = try await bounded { try await api.value(for: echo) }?.get()

                #expect(other.arrivals.count(.echo) == 1)
                #expect(echoed?["authorization"] == nil)
                #expect(echoed?["cookie"] == nil)
                #expect(echoed?["x-api-key"] == nil)
            }
        }

        @Test(arguments: TransportKind.allCases)
        func aRedirectWithinTheOriginKeepsTheToken(over transport: TransportKind) async throws {
            try await Fixture.with(over: transport) { fixture in
                let api = try await client(fixture)
                fixture.server.faults[.me] = Fault(redirectLocation: "/echo")
                let echoed = try await bounded { try await api.value(for: Resource<EchoedHeaders>(path: "me")) }?.get()
                #expect(echoed?["authorization"]?.hasPrefix("Bearer ") == true)
                #expect(echoed?["x-api-key"] == "ada-key")
            }
        }

        @Test(arguments: TransportKind.allCases)
        func aSameOriginPolicyAnswersARedirectElsewhereWithItsStatus(over transport: TransportKind) async throws {
            let other = try await SocialServer.start()
            defer { Task { await other.stop() } }
            try await Fixture.with(over: transport) { fixture in
                var sameOrigin = try await client(fixture)
                sameOrigin.redirectPolicy = .sameOrigin
                let api = sameOrigin
                fixture.server.faults[.me] = Fault(redirectLocation: "\(other.baseURL.absoluteString)/echo")
                let outcome = await bounded { try await api.value(for: Resource<EchoedHeaders>(path: "me")) }
                #expect(outcome?.failure?.statusCode == 302)
                #expect(other.arrivals.count(.echo) == 0)

                // And a resource that follows none stops even within the origin.
                fixture.server.faults[.me] = Fault(redirectLocation: "/echo")
                let never = await bounded { try await api.value(for: Resource<EchoedHeaders>(path: "me").redirecting(.never)) }
                #expect(never?.failure?.statusCode == 302)
                #expect(fixture.server.arrivals.count(.echo) == 0)
            }
        }

        // MARK: - Answers that never end

        @Test(arguments: TransportKind.allCases)
        func aTricklingBodyEndsAtTheAttemptDeadlineAndDoesNotStarveItsHost(over transport: TransportKind) async throws {
            // Given four trickling answers on a host of four slots (a byte every 400 ms: the
            // transport's own idle timeout never fires)
            try await Fixture.with(over: transport, budget: 4) { fixture in
                let api = try await client(fixture)
                fixture.server.faults[.me] = Fault(trickleMilliseconds: 400)
                let slow = Resource<User>(path: "me", timeout: 1.5)

                // When they are sent, with one healthy request behind them
                async let trickles = withTaskGroup(of: ServiceError?.self) { group in
                    for _ in 0..<4 { group.addTask { await bounded { try await api.value(for: slow) }?.failure } }
                    return await group.reduce(into: []) { $0.append($1) }
                }
                let healthy = await bounded { try await api.value(for: .user(2)) }

                // Then each ends as timed out at its deadline, and the healthy one gets its answer
                #expect(await trickles == [.timedOut, .timedOut, .timedOut, .timedOut])
                #expect(healthy?.success?.id == 2)
            }
        }

        @Test(arguments: TransportKind.allCases)
        func aBasicChallengeIsAnAnswerNotAHang(over transport: TransportKind) async throws {
            try await Fixture.with(over: transport) { fixture in
                let api = try await client(fixture)
                fixture.server.faults[.me] = Fault(basicChallenge: true)
                let outcome = await bounded { try await api.value(for: .me) }
                #expect(outcome?.failure?.statusCode == 401)
                #expect(outcome?.failure?.serverResponse?.message == "a password is needed")
            }
        }

        // MARK: - Size

        @Test(arguments: TransportKind.allCases)
        func aGzipBombFailsAsTooLarge(over transport: TransportKind) async throws {
            // FoundationNetworking inflates the whole body before a cancellation takes effect
            // (64 MiB here, a gigabyte for a 1 MiB bomb): the caller still gets a typed error.
            // AsyncHTTPClient bounds the memory too (below).
            try await Fixture.with(over: transport) { fixture in
                let api = try await client(fixture)
                fixture.server.faults[.me] = Fault(gzipBombBytes: 64 * 1_024 * 1_024)
                let outcome = await bounded { try await api.value(for: Resource<Data>(path: "me", decoding: .data).limitingResponses(to: 1_024 * 1_024)) }
                #expect(outcome?.failure == .responseTooLarge(limit: 1_024 * 1_024))

                // A small one inflates whole, as the size it says: the bomb is real gzip.
                fixture.server.faults[.me] = Fault(gzipBombBytes: 100_000)
                let small = await bounded { try await api.value(for: Resource<Data>(path: "me", decoding: .data)) }
                #expect(small?.success == Data(count: 100_000))
            }
        }

        // MARK: - Through AsyncHTTPClient: what FoundationNetworking cannot survive

        @Test func throughAsyncHTTPClientAGzipBombOfAGigabyteStopsAtTheLimitInMemoryToo() async throws {
            try await Fixture.with(over: .asyncHTTPClient) { fixture in
                let api = try await client(fixture)
                fixture.server.faults[.me] = Fault(gzipBombBytes: 1_024 * 1_024 * 1_024)
                let before = peakResidentBytes()
                let outcome = await bounded { try await api.value(for: Resource<Data>(path: "me", decoding: .data).limitingResponses(to: 1_024 * 1_024)) }
                #expect(outcome?.failure == .responseTooLarge(limit: 1_024 * 1_024))
                // The peak grew by far less than the gigabyte the body inflates to.
                #expect(peakResidentBytes() - before < 256 * 1_024 * 1_024)

                fixture.server.faults[.me] = Fault(gzipBombBytes: 100_000)
                let small = await bounded { try await api.value(for: Resource<Data>(path: "me", decoding: .data)) }
                #expect(small?.success == Data(count: 100_000))
            }
        }

        @Test(arguments: ["//[::1]:80/", "//a%00b/", "http://a b/", "ftp://127.0.0.1/x", "//user@/x"])
        func throughAsyncHTTPClientALocationThatIsNoURLToFollowIsAnErrorNotACrash(location: String) async throws {
            // Through URLSession on Linux, the first two trap the process inside
            // FoundationNetworking before any delegate is asked.
            try await Fixture.with(over: .asyncHTTPClient) { fixture in
                let api = try await client(fixture)
                fixture.server.faults[.me] = Fault(redirectLocation: location)
                let outcome = await bounded { try await api.value(for: Resource<User>(path: "me", timeout: 2)) }
                if location == "//[::1]:80/" {
                    // A valid URL on this machine's loopback, where nothing answers: refused, or
                    // ended at the attempt's deadline where IPv6 packets go nowhere.
                    let failure = outcome?.failure
                    #expect(failure?.isConnectivityFailure == true || failure == .timedOut, "\(String(describing: outcome))")
                } else {
                    guard case .badServerResponse? = outcome?.failure else {
                        Issue.record("expected badServerResponse, got \(String(describing: outcome))")
                        return
                    }
                }
            }
        }

        // MARK: - Secrets and users

        @Test(arguments: TransportKind.allCases)
        func aServersCookieStaysOutOfErrorTexts(over transport: TransportKind) async throws {
            try await Fixture.with(over: transport) { fixture in
                let api = try await client(fixture)
                fixture.server.faults[.me] = Fault(status: 500, setCookie: "session=server-secret")
                let error = try #require(await bounded { try await api.value(for: .me) }?.failure)
                var dumped = ""
                dump(error, to: &dumped)
                for text in ["\(error)", String(reflecting: error), error.localizedDescription, dumped] {
                    #expect(!text.contains("server-secret"), "\(text)")
                }
                #expect(error.serverResponse?.headers["set-cookie"] == "session=server-secret")
            }
        }

        @Test(arguments: TransportKind.allCases)
        func twoUsersAskingTheSameURLAtOnceGetTheirOwnAnswers(over transport: TransportKind) async throws {
            try await Fixture.with(over: transport) { fixture in
                let ada = try await fixture.logIn()
                let grace = try await fixture.api.auth.logIn(Credentials(username: "grace", password: "secret"))
                let scheduler = fixture.api.scheduler
                let asAda = APIClient(baseURL: fixture.server.baseURL, scheduler: scheduler, bearerToken: { ada.token })
                let asGrace = APIClient(baseURL: fixture.server.baseURL, scheduler: scheduler, bearerToken: { grace.token })
                fixture.server.faults.hold(.me)

                async let adasMe = bounded { try await asAda.value(for: .me) }
                async let gracesMe = bounded { try await asGrace.value(for: .me) }
                #expect(await fixture.server.arrivals.wait(for: 2, at: .me))
                fixture.server.faults.release(.me)

                #expect(await adasMe?.success?.id == ada.user.id)
                #expect(await gracesMe?.success?.id == grace.user.id)
            }
        }

        // MARK: - Hostile input

        @Test(arguments: TransportKind.allCases)
        func aTokenWithALineBreakNeverReachesTheServer(over transport: TransportKind) async throws {
            try await Fixture.with(over: transport) { fixture in
                _ = try await fixture.logIn()
                let api = APIClient(baseURL: fixture.server.baseURL, scheduler: fixture.api.scheduler,
                                    bearerToken: { "t0k3n\r\nX-Admin: yes" })
                let outcome = await bounded { try await api.value(for: .me) }
                guard case .invalidRequest? = outcome?.failure else {
                    Issue.record("expected invalidRequest, got \(String(describing: outcome))")
                    return
                }
                #expect(fixture.server.arrivals.count(.me) == 0)
            }
        }

        @Test(arguments: TransportKind.allCases)
        func aPathThatClimbsAboveTheBaseNeverReachesTheServer(over transport: TransportKind) async throws {
            try await Fixture.with(over: transport) { fixture in
                let api = try await client(fixture)
                let base = fixture.server.baseURL.appendingPathComponent("users")
                let below = APIClient(baseURL: base, scheduler: fixture.api.scheduler)
                let outcome = await bounded { try await below.value(for: Resource<User>(path: "1/../../me")) }
                guard case .invalidRequest? = outcome?.failure else {
                    Issue.record("expected invalidRequest, got \(String(describing: outcome))")
                    return
                }
                #expect(fixture.server.arrivals.count(.me) == 0)
                #expect(try await api.value(for: Resource<User>(path: "users/x/../1")).id == 1)
            }
        }
    }
}

/// The process's peak resident memory so far, in bytes, from /proc (0 where there is none).
private func peakResidentBytes() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
          let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
          let kilobytes = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) else { return 0 }
    return kilobytes * 1_024
}

extension Result {
    fileprivate var success: Success? {
        if case .success(let value) = self { return value }
        return nil
    }
}
