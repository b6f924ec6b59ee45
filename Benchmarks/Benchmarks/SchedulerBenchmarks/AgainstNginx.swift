import Benchmark
import Foundation

/// Scenario 1n: the loopback clients against nginx, a server that is not the bottleneck, so
/// that what the scheduler adds to each transport shows: its throughput against the same raw
/// transport, the CPU it adds per request, and the allocations and context switches per request
/// of every client (counted around each client's turns; the server is another process).
func registerAgainstNginx(concurrency: Int, method: Loopback.Method) {
    typealias Client = Loopback.Client
    // `NGINX_CLIENTS=raw AsyncHTTPClient,scheduler over AsyncHTTPClient` runs only those, for
    // a profiler; the ratios then need both clients of each.
    let chosen = ProcessInfo.processInfo.environment["NGINX_CLIENTS"].map { $0.split(separator: ",").map(String.init) }
    let clients = Client.againstNginx.filter { chosen?.contains($0.rawValue) ?? true }
    func each(_ name: String, prefersLarger: Bool = false) -> [Client: BenchmarkMetric] {
        Dictionary(uniqueKeysWithValues: clients.map { ($0, metric("\($0.rawValue): \(name)", prefersLarger: prefersLarger)) })
    }
    let throughput = each("requests/s", prefersLarger: true)
    let cpu = each("CPU µs/request")
    let allocations = each("allocations/request")
    let switches = each("context switches/request")
    let connections = each("TCP connections")
    let ahcCompletion = metric("AHC: scheduler completion ÷ raw (%)", prefersLarger: true)
    let ahcAsync = metric("AHC: scheduler async ÷ raw (%)", prefersLarger: true)
    let ahcAdded = metric("AHC: scheduler completion CPU over raw (µs/request)")
    let ahcAllocations = metric("AHC: scheduler completion allocations over raw (per request)")
    let ahcOperation = metric("AHC: plain Operation CPU over raw (µs/request)")
    let ahcBeyondOperation = metric("AHC: scheduler completion CPU over the plain Operation (µs/request)")
    let ahcAllocationsBeyondOperation = metric("AHC: scheduler completion allocations over the plain Operation (per request)")
    let urlSessionDelegate = metric("URLSession: scheduler completion ÷ raw delegate (%)", prefersLarger: true)
    let urlSessionAsync = metric("URLSession: scheduler async ÷ raw data(for:) (%)", prefersLarger: true)
    let urlSessionAdded = metric("URLSession: scheduler completion CPU over raw delegate (µs/request)")
    let perClient = [throughput, cpu, allocations, switches, connections].flatMap { metrics in clients.map { metrics[$0]! } }
    let metrics = perClient + [ahcCompletion, ahcAsync, ahcAdded, ahcAllocations, ahcOperation, ahcBeyondOperation,
                               ahcAllocationsBeyondOperation,
                               urlSessionDelegate, urlSessionAsync, urlSessionAdded]
    Benchmark("1n. Against nginx, 10,000 \(method.rawValue), concurrency \(concurrency)",
              configuration: configuration(metrics, iterations: method == .get ? 6 : 4)) { benchmark in
        do {
            let loopback = try await Loopback.start(requests: 10_000, concurrency: concurrency, method: method, against: .nginx)
            defer { loopback.server.stop() }
            var order = clients
            if benchmark.currentIteration % 2 == 1 { order.reverse() }
            let runs = try await countingAllocations { try await loopback.run(order, slices: 10) }
            for client in clients {
                let cost = runs[client]!.cost
                benchmark.measurement(throughput[client]!, Int(cost.perSecond))
                benchmark.measurement(cpu[client]!, Int((cost.cpuNanosecondsEach / 1_000).rounded()))
                benchmark.measurement(allocations[client]!, Int(cost.allocationsEach.rounded()))
                benchmark.measurement(switches[client]!, Int(cost.contextSwitchesEach.rounded()))
                benchmark.measurement(connections[client]!, runs[client]!.connections)
            }
            guard Set(clients) == Set(Client.againstNginx) else { return }
            let cost = { (client: Client) in runs[client]!.cost }
            let ratio = { (client: Client, baseline: Client) in percent(cost(client).perSecond / cost(baseline).perSecond) }
            let added = { (client: Client, baseline: Client) in
                Int(((cost(client).cpuNanosecondsEach - cost(baseline).cpuNanosecondsEach) / 1_000).rounded())
            }
            benchmark.measurement(ahcCompletion, ratio(.schedulerAsyncHTTPClient, .rawAsyncHTTPClient))
            benchmark.measurement(ahcAsync, ratio(.schedulerAsyncOverAsyncHTTPClient, .rawAsyncHTTPClient))
            benchmark.measurement(ahcAdded, added(.schedulerAsyncHTTPClient, .rawAsyncHTTPClient))
            benchmark.measurement(ahcAllocations, Int((cost(.schedulerAsyncHTTPClient).allocationsEach - cost(.rawAsyncHTTPClient).allocationsEach).rounded()))
            benchmark.measurement(ahcOperation, added(.operationAsyncHTTPClient, .rawAsyncHTTPClient))
            benchmark.measurement(ahcBeyondOperation, added(.schedulerAsyncHTTPClient, .operationAsyncHTTPClient))
            benchmark.measurement(ahcAllocationsBeyondOperation, Int((cost(.schedulerAsyncHTTPClient).allocationsEach
                - cost(.operationAsyncHTTPClient).allocationsEach).rounded()))
            benchmark.measurement(urlSessionDelegate, ratio(.schedulerCompletion, .rawDelegate))
            benchmark.measurement(urlSessionAsync, ratio(.schedulerAsync, .rawAsync))
            benchmark.measurement(urlSessionAdded, added(.schedulerCompletion, .rawDelegate))
        } catch {
            benchmark.error("\(error)")
        }
    }
}
