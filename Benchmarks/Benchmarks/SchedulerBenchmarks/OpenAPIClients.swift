import AsyncHTTPClient
import Benchmark
import Foundation
import HTTPTypes
import NetworkScheduler
import NetworkSchedulerAsyncHTTPClient
import NetworkSchedulerOpenAPI
import OpenAPIAsyncHTTPClient
import OpenAPIRuntime
import OpenAPIURLSession

/// Scenario 14: a generated OpenAPI client's calls, as the runtime hands them to its transport,
/// against nginx. The runtime's own transports (swift-openapi-urlsession and
/// swift-openapi-async-http-client) against `SchedulerClientTransport` over the library's
/// transport of the same kind. Each call is what a generated client sends for
/// `listFriends(id: 1)` with a query of its own (`GET /users/1/friends?n=…`, so that none is
/// shared), read whole and decoded into the same models with a shared decoder; C calls are
/// outstanding, in turns interleaved between the clients.
struct OpenAPIClients {
    enum Client: String, CaseIterable {
        case runtimeURLSession = "OpenAPI URLSessionTransport"
        case schedulerURLSession = "SchedulerClientTransport over URLSession"
        case runtimeAsyncHTTPClient = "OpenAPI AsyncHTTPClientTransport"
        case schedulerAsyncHTTPClient = "SchedulerClientTransport over AsyncHTTPClient"
    }

    let server: NginxProcess
    let requests: Int
    let concurrency: Int

    private static let decoder = JSONDecoder()

    /// Each client's cost, its requests run in `slices` turns interleaved with the others'.
    func run(_ order: [Client], slices: Int) async throws -> [Client: Cost] {
        let httpClient = Loopback.httpClient()
        let session = Loopback.session()
        let schedulerAHC = NetworkSchedulerAsyncHTTPClient.AsyncHTTPClientTransport(
            client: Loopback.httpClient(), maximumConnectionsPerHost: Loopback.asyncHTTPClientConnections)
        let schedulerSession = NetworkScheduler.URLSessionTransport(session: Loopback.session())
        let transports: [Client: any ClientTransport] = [
            .runtimeURLSession: OpenAPIURLSession.URLSessionTransport(configuration: .init(session: session)),
            .runtimeAsyncHTTPClient: OpenAPIAsyncHTTPClient.AsyncHTTPClientTransport(configuration: .init(client: httpClient)),
            .schedulerURLSession: SchedulerClientTransport(client: client(over: schedulerSession)),
            .schedulerAsyncHTTPClient: SchedulerClientTransport(client: client(over: schedulerAHC)),
        ]
        defer {
            session.invalidateAndCancel()
            schedulerSession.invalidate()
        }
        var costs: [Client: Cost] = [:]
        let perSlice = requests / slices
        for slice in 0..<slices {
            for client in order {
                let indices = (slice * perSlice)..<((slice + 1) * perSlice)
                let cost = try await run(transports[client]!, indices: indices)
                costs[client] = costs[client].map { $0 + cost } ?? cost
            }
        }
        try await httpClient.shutdown()
        try await schedulerAHC.shutdown()
        return costs
    }

    /// A client of nginx through a scheduler with its default configuration: no cache, and
    /// its own budget per host.
    private func client(over transport: any HTTPTransport) -> APIClient {
        APIClient(baseURL: server.baseURL, scheduler: RequestScheduler { $0.transport = transport },
                  bearerToken: { "benchmark" })
    }

    private func run(_ transport: any ClientTransport, indices: Range<Int>) async throws -> Cost {
        let failures = Counter()
        let cost = await measure(count: indices.count) { done in
            let next = Counter()
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<concurrency {
                    group.addTask {
                        while case let index = indices.lowerBound + next.take(), index < indices.upperBound {
                            if await !call(index, through: transport) { failures.take() }
                            done()
                        }
                    }
                }
            }
        }
        guard failures.value == 0 else { throw BenchmarkFailure("\(failures.value) OpenAPI calls failed") }
        return cost
    }

    /// One call as a generated client makes it, read whole and decoded.
    private func call(_ index: Int, through transport: any ClientTransport) async -> Bool {
        let request = HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/users/1/friends?n=\(index)",
                                  headerFields: [.accept: "application/json", .authorization: "Bearer benchmark"])
        do {
            let (response, body) = try await transport.send(request, body: nil, baseURL: server.baseURL, operationID: "listFriends")
            guard response.status == .ok, let body else { return false }
            let data = try await Data(collecting: body, upTo: 1 << 20)
            return (try? Self.decoder.decode([User].self, from: data))?.count == 6
        } catch {
            return false
        }
    }
}

/// Scenario 14's benchmark: each client's throughput and CPU, and the ratios of the scheduler's
/// transport to the runtime's transport of the same kind.
func registerOpenAPIClients(concurrency: Int) {
    typealias Client = OpenAPIClients.Client
    let clients = Client.allCases
    let throughput = Dictionary(uniqueKeysWithValues: clients.map { ($0, metric("\($0.rawValue): requests/s", prefersLarger: true)) })
    let cpu = Dictionary(uniqueKeysWithValues: clients.map { ($0, metric("\($0.rawValue): CPU µs/request")) })
    let allocations = Dictionary(uniqueKeysWithValues: clients.map { ($0, metric("\($0.rawValue): allocations/request")) })
    let overURLSession = metric("URLSession: scheduler ÷ OpenAPI transport (%)", prefersLarger: true)
    let overAHC = metric("AHC: scheduler ÷ OpenAPI transport (%)", prefersLarger: true)
    let addedURLSession = metric("URLSession: scheduler CPU over OpenAPI transport (µs/request)")
    let addedAHC = metric("AHC: scheduler CPU over OpenAPI transport (µs/request)")
    let metrics = clients.map { throughput[$0]! } + clients.map { cpu[$0]! } + clients.map { allocations[$0]! }
        + [overURLSession, overAHC, addedURLSession, addedAHC]
    Benchmark("14. A generated OpenAPI client against nginx, 10,000 GETs, concurrency \(concurrency)",
              configuration: configuration(metrics, iterations: 6)) { benchmark in
        do {
            let server = try NginxProcess.start()
            defer { server.stop() }
            var order = clients
            if benchmark.currentIteration % 2 == 1 { order.reverse() }
            let costs = try await countingAllocations {
                try await OpenAPIClients(server: server, requests: 10_000, concurrency: concurrency).run(order, slices: 10)
            }
            for client in clients {
                benchmark.measurement(throughput[client]!, Int(costs[client]!.perSecond))
                benchmark.measurement(cpu[client]!, Int((costs[client]!.cpuNanosecondsEach / 1_000).rounded()))
                benchmark.measurement(allocations[client]!, Int(costs[client]!.allocationsEach.rounded()))
            }
            let ratio = { (client: Client, baseline: Client) in percent(costs[client]!.perSecond / costs[baseline]!.perSecond) }
            let added = { (client: Client, baseline: Client) in
                Int(((costs[client]!.cpuNanosecondsEach - costs[baseline]!.cpuNanosecondsEach) / 1_000).rounded())
            }
            benchmark.measurement(overURLSession, ratio(.schedulerURLSession, .runtimeURLSession))
            benchmark.measurement(overAHC, ratio(.schedulerAsyncHTTPClient, .runtimeAsyncHTTPClient))
            benchmark.measurement(addedURLSession, added(.schedulerURLSession, .runtimeURLSession))
            benchmark.measurement(addedAHC, added(.schedulerAsyncHTTPClient, .runtimeAsyncHTTPClient))
        } catch {
            benchmark.error("\(error)")
        }
    }
}
