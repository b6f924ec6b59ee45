import Benchmark
import Foundation
import NetworkScheduler

// Each benchmark runs the scheduler and its baseline in the same iteration, alternating which
// goes first, and reports ratios and differences as custom metrics: absolute times on a shared
// 2-core machine drift between runs, ratios taken side by side do not.

let benchmarks: @Sendable () -> Void = {
    registerLoopback(concurrency: 8, method: .get)
    registerLoopback(concurrency: 64, method: .get)
    registerLoopback(concurrency: 8, method: .post)
    registerLoopback(concurrency: 64, method: .post)
    registerAgainstNginx(concurrency: 8, method: .get)
    registerAgainstNginx(concurrency: 64, method: .get)
    registerAgainstNginx(concurrency: 8, method: .post)
    registerAgainstNginx(concurrency: 64, method: .post)
    registerSchedulingCost()
    registerFanOut()
    registerGroupCancellation()
    registerPriorityUnderSaturation()
    registerQueuedMemory()
    registerGroupReranking()
    registerRateLimiting()
    registerOperationDependencies()
    registerUploads()
    registerDownloads()
    registerOutboxEnqueue()
    registerCacheHits()
    registerOpenAPIClients(concurrency: 8)
    registerOpenAPIClients(concurrency: 64)
}

/// A metric a benchmark reports itself; `prefersLarger` for ratios where more is better.
func metric(_ name: String, prefersLarger: Bool = false) -> BenchmarkMetric {
    .custom(name, polarity: prefersLarger ? .prefersLarger : .prefersSmaller, useScalingFactor: false)
}

/// A configuration for a benchmark whose iterations take seconds.
func configuration(_ metrics: [BenchmarkMetric], iterations: Int, warmup: Int = 1) -> Benchmark.Configuration {
    .init(metrics: metrics, units: Dictionary(uniqueKeysWithValues: metrics.map { ($0, .count) }),
          warmupIterations: warmup, maxDuration: .seconds(900), maxIterations: iterations)
}

/// Percent, rounded: the custom metrics are integers.
func percent(_ ratio: Double) -> Int {
    Int((ratio * 100).rounded())
}

func registerLoopback(concurrency: Int, method: Loopback.Method) {
    typealias Client = Loopback.Client
    let throughput = Dictionary(uniqueKeysWithValues: Client.againstSocialServer.map { ($0, metric("\($0.rawValue): requests/s", prefersLarger: true)) })
    let connections = Dictionary(uniqueKeysWithValues: Client.againstSocialServer.map { ($0, metric("\($0.rawValue): TCP connections")) })
    let vsRawCompletion = metric("scheduler completion ÷ raw completion (%)", prefersLarger: true)
    let vsRawDelegate = metric("scheduler completion ÷ raw delegate (%)", prefersLarger: true)
    let vsBestRaw = metric("best scheduler ÷ best raw URLSession (%)", prefersLarger: true)
    let cpuAdded = metric("scheduler completion CPU over raw completion (µs/request)")
    let overAHC = metric("scheduler over AsyncHTTPClient ÷ raw AsyncHTTPClient (%)", prefersLarger: true)
    let overURLSession = metric("scheduler over AsyncHTTPClient ÷ scheduler completion over URLSession (%)", prefersLarger: true)
    let cpuEach = Dictionary(uniqueKeysWithValues: Client.againstSocialServer.map { ($0, metric("\($0.rawValue): CPU µs/request")) })
    let metrics = Client.againstSocialServer.map { throughput[$0]! } + Client.againstSocialServer.map { connections[$0]! }
        + Client.againstSocialServer.map { cpuEach[$0]! } + [vsRawCompletion, vsRawDelegate, vsBestRaw, cpuAdded, overAHC, overURLSession]
    // Each client's 10,000 requests run in ten turns of 1,000, interleaved with the other
    // clients' turns, so that the VM's drift over the minute of an iteration falls on all of
    // them alike. Even so a ratio moves by ±8 % between iterations, more than the scheduler's
    // own cost (~2 % of URLSession's): ten iterations, for a median that six left to chance.
    Benchmark("1. Loopback throughput, 10,000 \(method.rawValue), concurrency \(concurrency)",
              configuration: configuration(metrics, iterations: method == .get ? 10 : 6)) { benchmark in
        do {
            let loopback = try await Loopback.start(requests: 10_000, concurrency: concurrency, method: method)
            defer { loopback.server.stop() }
            var order = Client.againstSocialServer
            if benchmark.currentIteration % 2 == 1 { order.reverse() }
            let runs = try await loopback.run(order, slices: 10)
            for client in Client.againstSocialServer {
                benchmark.measurement(throughput[client]!, Int(runs[client]!.cost.perSecond))
                benchmark.measurement(connections[client]!, runs[client]!.connections)
                benchmark.measurement(cpuEach[client]!, Int((runs[client]!.cost.cpuNanosecondsEach / 1_000).rounded()))
            }
            let rate = { (client: Client) in runs[client]!.cost.perSecond }
            benchmark.measurement(vsRawCompletion, percent(rate(.schedulerCompletion) / rate(.rawCompletion)))
            benchmark.measurement(vsRawDelegate, percent(rate(.schedulerCompletion) / rate(.rawDelegate)))
            benchmark.measurement(vsBestRaw, percent(max(rate(.schedulerCompletion), rate(.schedulerAsync))
                / max(rate(.rawCompletion), rate(.rawAsync), rate(.rawDelegate), rate(.plainOperation))))
            let added = runs[.schedulerCompletion]!.cost.cpuNanosecondsEach - runs[.rawCompletion]!.cost.cpuNanosecondsEach
            benchmark.measurement(cpuAdded, Int((added / 1000).rounded()))
            benchmark.measurement(overAHC, percent(rate(.schedulerAsyncHTTPClient) / rate(.rawAsyncHTTPClient)))
            benchmark.measurement(overURLSession, percent(rate(.schedulerAsyncHTTPClient) / rate(.schedulerCompletion)))
        } catch {
            benchmark.error("\(error)")
        }
    }
}

func registerSchedulingCost() {
    typealias Variant = SchedulingCost.Variant
    let requestsPerSecond = Dictionary(uniqueKeysWithValues: Variant.allCases.map { ($0, metric("\($0.rawValue): requests/s", prefersLarger: true)) })
    let cpuEach = Dictionary(uniqueKeysWithValues: Variant.allCases.map { ($0, metric("\($0.rawValue): CPU ns/request")) })
    let addedCompletion = metric("scheduler completion: added CPU over bare (ns/request)")
    let addedOverDecoding = metric("scheduler completion: added CPU over bare + decode (ns/request)")
    let addedAsync = metric("scheduler async: added CPU over bare (ns/request)")
    let ratio = metric("scheduler completion ÷ bare queue throughput (%)", prefersLarger: true)
    let ratioDecoding = metric("scheduler completion ÷ bare queue + decode throughput (%)", prefersLarger: true)
    let metrics = Variant.allCases.map { requestsPerSecond[$0]! } + Variant.allCases.map { cpuEach[$0]! }
        + [addedCompletion, addedOverDecoding, addedAsync, ratio, ratioDecoding]
    // Thirty iterations (about a second each): the bare baseline alone moves by 2 µs between
    // iterations on a shared VM, a fifth of the target, and ten left the median that loose.
    Benchmark("2. Scheduling cost, 20,000 stubbed requests",
              configuration: configuration(metrics, iterations: 30)) { benchmark in
        let scenario = SchedulingCost(requests: 20_000)
        var order = Variant.allCases
        if benchmark.currentIteration % 2 == 1 { order.reverse() }
        var costs: [Variant: Cost] = [:]
        for variant in order { costs[variant] = await scenario.run(variant) }
        for variant in Variant.allCases {
            benchmark.measurement(requestsPerSecond[variant]!, Int(costs[variant]!.perSecond))
            benchmark.measurement(cpuEach[variant]!, Int(costs[variant]!.cpuNanosecondsEach))
        }
        let bare = costs[.bareQueue]!.cpuNanosecondsEach
        benchmark.measurement(addedCompletion, Int(costs[.schedulerCompletion]!.cpuNanosecondsEach - bare))
        let decoding = costs[.bareQueueDecoding]!.cpuNanosecondsEach
        benchmark.measurement(addedOverDecoding, Int(costs[.schedulerCompletion]!.cpuNanosecondsEach - decoding))
        benchmark.measurement(addedAsync, Int(costs[.schedulerAsync]!.cpuNanosecondsEach - bare))
        benchmark.measurement(ratio, percent(costs[.schedulerCompletion]!.perSecond / costs[.bareQueue]!.perSecond))
        benchmark.measurement(ratioDecoding, percent(costs[.schedulerCompletion]!.perSecond
            / costs[.bareQueueDecoding]!.perSecond))
    }
}

func registerFanOut() {
    let perJoiner = metric("response to last delivery (ns/joiner)")
    let calls = metric("network calls")
    Benchmark("3. Dedup fan-out, 10,000 identical requests",
              configuration: configuration([perJoiner, calls], iterations: 10)) { benchmark in
        let result = await FanOut(callers: 10_000).run()
        benchmark.measurement(perJoiner, Int(result.deliveryNanoseconds) / result.callers)
        benchmark.measurement(calls, result.networkCalls)
    }
}

func registerGroupCancellation() {
    let cancelCall = metric("cancelAll() (ns/request)")
    let delivered = metric("until every caller has .cancelled (ns/request)")
    let reached = metric("requests that reached the transport")
    Benchmark("4. Group cancellation, 10,000 queued requests",
              configuration: configuration([cancelCall, delivered, reached], iterations: 10)) { benchmark in
        let result = await GroupCancellation(requests: 10_000).run()
        benchmark.measurement(cancelCall, Int(result.cancelCallNanoseconds) / result.requests)
        benchmark.measurement(delivered, Int(result.allDeliveredNanoseconds) / result.requests)
        benchmark.measurement(reached, result.reachedTransport)
    }
}

func registerPriorityUnderSaturation() {
    let highP50 = metric("high priority: queue wait p50 (µs)")
    let highP99 = metric("high priority: queue wait p99 (µs)")
    let lowWire = metric("low priority: time on the wire p50 (µs)")
    let ratio = metric("high p99 wait ÷ low wire time (%)")
    let saturated = metric("lows still waiting after the last high", prefersLarger: true)
    Benchmark("5. Priority under saturation, 1,000 low then 100 high",
              configuration: configuration([highP50, highP99, lowWire, ratio, saturated], iterations: 3)) { benchmark in
        do {
            let result = try await PriorityUnderSaturation(lowRequests: 1_000, highRequests: 100, lowLatencyMilliseconds: 5).run()
            let wire = percentile(0.5, of: result.lowWireTimes)
            let p99 = percentile(0.99, of: result.highQueueWaits)
            benchmark.measurement(highP50, Int(percentile(0.5, of: result.highQueueWaits) * 1e6))
            benchmark.measurement(highP99, Int(p99 * 1e6))
            benchmark.measurement(lowWire, Int(wire * 1e6))
            benchmark.measurement(ratio, percent(p99 / wire))
            benchmark.measurement(saturated, result.lowsWaitingAtEnd)
        } catch {
            benchmark.error("\(error)")
        }
    }
}

func registerQueuedMemory() {
    let resident = metric("resident bytes per queued request")
    Benchmark("6. Memory, 100,000 queued requests",
              configuration: configuration([resident], iterations: 1, warmup: 0)) { benchmark in
        benchmark.measurement(resident, Int(await QueuedMemory(requests: 100_000).run()))
    }
}

func registerGroupReranking() {
    let lower = metric("setPriority(.background) (ns/request)")
    let raise = metric("setPriority(.high) (ns/request)")
    let cancel = metric("cancelAll() of the same group (ns/request)")
    let ratio = metric("slower setPriority ÷ cancelAll() (%)")
    Benchmark("7. Group re-ranking, 10,000 queued requests",
              configuration: configuration([lower, raise, cancel, ratio], iterations: 10)) { benchmark in
        let result = await GroupReranking(requests: 10_000).run()
        benchmark.measurement(lower, Int(result.lowerNanoseconds) / result.requests)
        benchmark.measurement(raise, Int(result.raiseNanoseconds) / result.requests)
        benchmark.measurement(cancel, Int(result.cancelNanoseconds) / result.requests)
        benchmark.measurement(ratio, percent(Double(max(result.lowerNanoseconds, result.raiseNanoseconds))
            / Double(result.cancelNanoseconds)))
    }
}

func registerRateLimiting() {
    let unlimited = metric("no limit (ns/request)")
    let limited = metric("limit that never binds (ns/request)")
    let ratio = metric("limit that never binds ÷ no limit (%)")
    let pace = metric("paced starts ÷ limit (%)")
    let busiest = metric("most starts in one second (limit 500/s, burst 50)")
    Benchmark("8. Rate limiter, 20,000 requests; 1,000 paced at 500/s",
              configuration: configuration([unlimited, limited, ratio, pace, busiest], iterations: 5)) { benchmark in
        let scenario = RateLimiting(requests: 20_000, pacedRequests: 1_000)
        let bound = HostHealth.RateLimit(requestsPerSecond: 1e12, burst: Int.max / 2)
        var (without, with) = (Cost(wallNanoseconds: 0, cpuNanoseconds: 0, count: 0), Cost(wallNanoseconds: 0, cpuNanoseconds: 0, count: 0))
        if benchmark.currentIteration % 2 == 0 {
            without = await scenario.cost(limit: nil)
            with = await scenario.cost(limit: bound)
        } else {
            with = await scenario.cost(limit: bound)
            without = await scenario.cost(limit: nil)
        }
        benchmark.measurement(unlimited, Int(Double(without.wallNanoseconds) / Double(without.count)))
        benchmark.measurement(limited, Int(Double(with.wallNanoseconds) / Double(with.count)))
        benchmark.measurement(ratio, percent(Double(with.wallNanoseconds) / Double(without.wallNanoseconds)))
        let (perSecond, most) = await scenario.pacing()
        benchmark.measurement(pace, percent(perSecond / RateLimiting.paced.requestsPerSecond))
        benchmark.measurement(busiest, most)
    }
}

func registerOperationDependencies() {
    typealias Variant = OperationDependencies.Variant
    let send = Dictionary(uniqueKeysWithValues: Variant.allCases.map { ($0, metric("\($0.rawValue): send (ns/dependent)")) })
    let release = Dictionary(uniqueKeysWithValues: Variant.allCases.map { ($0, metric("\($0.rawValue): to the last end (ns/dependent)")) })
    let fanInRatio = metric("fan-in on an Operation ÷ on a request, to the last end (%)")
    let fanInSendRatio = metric("fan-in on an Operation ÷ on a request, send (%)")
    let pairsRatio = metric("Operation after request ÷ request after request (%)")
    let pairsAdded = metric("Operation after request over Foundation's floor (ns/pair)")
    let metrics = Variant.allCases.map { send[$0]! } + Variant.allCases.map { release[$0]! }
        + [fanInRatio, fanInSendRatio, pairsRatio, pairsAdded]
    Benchmark("9. Dependencies on Operations, 10,000 dependents",
              configuration: configuration(metrics, iterations: 10)) { benchmark in
        let scenario = OperationDependencies(dependents: 10_000)
        var order = Variant.allCases
        if benchmark.currentIteration % 2 == 1 { order.reverse() }
        var results: [Variant: OperationDependencies.Result] = [:]
        for variant in order { results[variant] = await scenario.run(variant) }
        for variant in Variant.allCases {
            benchmark.measurement(send[variant]!, Int(results[variant]!.sendNanoseconds))
            benchmark.measurement(release[variant]!, Int(results[variant]!.releaseNanoseconds))
        }
        let ratio = { (variant: Variant, baseline: Variant, value: KeyPath<OperationDependencies.Result, Double>) in
            percent(results[variant]![keyPath: value] / results[baseline]![keyPath: value])
        }
        benchmark.measurement(fanInRatio, ratio(.fanInOnOperation, .fanInOnHandle, \.releaseNanoseconds))
        benchmark.measurement(fanInSendRatio, ratio(.fanInOnOperation, .fanInOnHandle, \.sendNanoseconds))
        benchmark.measurement(pairsRatio, ratio(.pairsOperationAfterRequest, .pairsOfRequests, \.releaseNanoseconds))
        let floor = results[.pairsOperationAfterOperation]!.releaseNanoseconds
        benchmark.measurement(pairsAdded, Int(results[.pairsOperationAfterRequest]!.releaseNanoseconds - floor))
    }
}

func registerUploads() {
    typealias Client = Uploads.Client
    let fileBytes = 1 << 30
    let lowBytes = 200 * 1_000_000
    let throughput = Dictionary(uniqueKeysWithValues: Client.allCases.map { ($0, metric("\($0.rawValue): MB/s", prefersLarger: true)) })
    let growth = Dictionary(uniqueKeysWithValues: Client.allCases.map { ($0, metric("\($0.rawValue): peak resident growth (MiB)")) })
    let overURLSession = metric("scheduler ÷ raw URLSession, throughput (%)", prefersLarger: true)
    let overAHC = metric("scheduler ÷ raw AsyncHTTPClient, throughput (%)", prefersLarger: true)
    let scheduled: [Client] = [.scheduledURLSession, .scheduledAsyncHTTPClient]
    let waitP99 = Dictionary(uniqueKeysWithValues: scheduled.map { ($0, metric("\($0.rawValue): JSON queue wait p99 beside a 200 MB .low upload (µs)")) })
    let wireP50 = Dictionary(uniqueKeysWithValues: scheduled.map { ($0, metric("\($0.rawValue): JSON wire time p50 (µs)")) })
    let waitOverWire = Dictionary(uniqueKeysWithValues: scheduled.map { ($0, metric("\($0.rawValue): queue wait p99 ÷ wire time p50 (%)")) })
    let metrics = Client.allCases.map { throughput[$0]! } + Client.allCases.map { growth[$0]! } + [overURLSession, overAHC]
        + scheduled.map { waitP99[$0]! } + scheduled.map { wireP50[$0]! } + scheduled.map { waitOverWire[$0]! }
    Benchmark("10. Uploads against nginx: 1 GiB from a file; JSON calls beside a 200 MB upload",
              configuration: configuration(metrics, iterations: 3)) { benchmark in
        do {
            let uploads = try Uploads.start()
            defer { uploads.stop() }
            let big = try uploads.file(bytes: fileBytes, named: "one-gibibyte.bin")
            let low = try uploads.file(bytes: lowBytes, named: "two-hundred-megabytes.bin")
            var order = Client.allCases
            if benchmark.currentIteration % 2 == 1 { order.reverse() }
            var sent: [Client: Uploads.Sent] = [:]
            for client in order { sent[client] = try await uploads.send(big, bytes: fileBytes, with: client) }
            for client in Client.allCases {
                benchmark.measurement(throughput[client]!, Int(sent[client]!.bytesPerSecond / 1e6))
                benchmark.measurement(growth[client]!, sent[client]!.peakGrowthBytes >> 20)
            }
            benchmark.measurement(overURLSession, percent(sent[.scheduledURLSession]!.bytesPerSecond / sent[.rawURLSession]!.bytesPerSecond))
            benchmark.measurement(overAHC, percent(sent[.scheduledAsyncHTTPClient]!.bytesPerSecond / sent[.rawAsyncHTTPClient]!.bytesPerSecond))
            for client in scheduled {
                let latency = try await uploads.latencyBeside(low, over: client)
                benchmark.measurement(waitP99[client]!, Int(latency.queueWaitP99 * 1e6))
                benchmark.measurement(wireP50[client]!, Int(latency.wireTimeP50 * 1e6))
                benchmark.measurement(waitOverWire[client]!, percent(latency.queueWaitP99 / latency.wireTimeP50))
            }
        } catch {
            benchmark.error("\(error)")
        }
    }
}

func registerDownloads() {
    typealias Client = Downloads.Client
    let bytes = 1 << 30
    let throughput = Dictionary(uniqueKeysWithValues: Client.allCases.map { ($0, metric("\($0.rawValue): MB/s", prefersLarger: true)) })
    let growth = Dictionary(uniqueKeysWithValues: Client.allCases.map { ($0, metric("\($0.rawValue): peak resident growth (MiB)")) })
    let overDownloadTask = metric("scheduler ÷ raw URLSession download task, throughput (%)", prefersLarger: true)
    let overDataTask = metric("scheduler ÷ raw URLSession data task to a file, throughput (%)", prefersLarger: true)
    let overAHC = metric("scheduler ÷ raw AsyncHTTPClient, throughput (%)", prefersLarger: true)
    let besideOverDownloadTask = metric("scheduler at low beside GETs ÷ raw URLSession download task, throughput (%)", prefersLarger: true)
    let slowestGET = metric("slowest high GET beside the low download (µs)")
    let medianGET = metric("median high GET beside the low download (µs)")
    let metrics = Client.allCases.map { throughput[$0]! } + Client.allCases.map { growth[$0]! }
        + [overDownloadTask, overDataTask, overAHC, besideOverDownloadTask, slowestGET, medianGET]
    Benchmark("11. Downloads against nginx: 1 GiB to a file",
              configuration: configuration(metrics, iterations: 5)) { benchmark in
        do {
            let downloads = try Downloads.start(bytes: bytes)
            defer { downloads.stop() }
            var order = Client.allCases
            if benchmark.currentIteration % 2 == 1 { order.reverse() }
            var received: [Client: Downloads.Received] = [:]
            for client in order { received[client] = try await downloads.receive(bytes: bytes, with: client) }
            for client in Client.allCases {
                benchmark.measurement(throughput[client]!, Int(received[client]!.bytesPerSecond / 1e6))
                benchmark.measurement(growth[client]!, received[client]!.peakGrowthBytes >> 20)
            }
            let scheduled = received[.scheduledURLSession]!.bytesPerSecond
            benchmark.measurement(overDownloadTask, percent(scheduled / received[.rawDownloadTask]!.bytesPerSecond))
            benchmark.measurement(overDataTask, percent(scheduled / received[.rawDataTaskToFile]!.bytesPerSecond))
            benchmark.measurement(overAHC, percent(received[.scheduledAsyncHTTPClient]!.bytesPerSecond
                / received[.rawAsyncHTTPClient]!.bytesPerSecond))
            benchmark.measurement(besideOverDownloadTask, percent(received[.scheduledBesideGETs]!.bytesPerSecond
                / received[.rawDownloadTask]!.bytesPerSecond))
            benchmark.measurement(slowestGET, received[.scheduledBesideGETs]!.slowestGETMicroseconds ?? 0)
            benchmark.measurement(medianGET, received[.scheduledBesideGETs]!.medianGETMicroseconds ?? 0)
        } catch {
            benchmark.error("\(error)")
        }
    }
}

func registerOutboxEnqueue() {
    let writes = 10_000
    let outboxWall = metric("outbox enqueue: µs a write (wall)")
    let outboxCPU = metric("outbox enqueue: µs of CPU a write")
    let bareWall = metric("FileHandle append + fsync: µs a write (wall)")
    let bareCPU = metric("FileHandle append + fsync: µs of CPU a write")
    let ratio = metric("outbox ÷ bare append, wall time (%)")
    let cpuAdded = metric("outbox's CPU added a write (µs)")
    Benchmark("12. Outbox: 10,000 writes enqueued, each on disk before it returns",
              configuration: configuration([outboxWall, outboxCPU, bareWall, bareCPU, ratio, cpuAdded], iterations: 3)) { benchmark in
        do {
            let first = benchmark.currentIteration % 2 == 0
            let bare = first ? try OutboxEnqueue.bareAppend(writes: writes) : nil
            let outbox = try OutboxEnqueue.outbox(writes: writes)
            let base = try bare ?? OutboxEnqueue.bareAppend(writes: writes)
            benchmark.measurement(outboxWall, Int(outbox.wallMicroseconds))
            benchmark.measurement(outboxCPU, Int(outbox.cpuMicroseconds))
            benchmark.measurement(bareWall, Int(base.wallMicroseconds))
            benchmark.measurement(bareCPU, Int(base.cpuMicroseconds))
            benchmark.measurement(ratio, percent(outbox.wallMicroseconds / base.wallMicroseconds))
            benchmark.measurement(cpuAdded, Int(outbox.cpuMicroseconds - base.cpuMicroseconds))
        } catch {
            benchmark.error("\(error)")
        }
    }
}

func registerCacheHits() {
    let hitCPU = metric("fresh hit, decoded: CPU ns/request")
    let decodeCPU = metric("decode alone: CPU ns/request")
    let networkCPU = metric("stub network, no cache: CPU ns/request")
    let added = metric("fresh hit's CPU over the decode alone (ns/request)")
    let saved = metric("stub network ÷ fresh hit, CPU (%)", prefersLarger: true)
    let smallData = metric("fresh hit of 1 KiB as Data: CPU ns/request")
    let largeData = metric("fresh hit of 1 MiB as Data: CPU ns/request")
    let sizeRatio = metric("1 MiB ÷ 1 KiB hit, CPU (%)")
    let revalidations = metric("stale-while-revalidate, 10,000 callers: revalidations sent")
    let staleCPU = metric("stale-while-revalidate: CPU ns/caller")
    Benchmark("13. Cache: 20,000 fresh hits; 10,000 callers of one stale-while-revalidate answer",
              configuration: configuration([hitCPU, decodeCPU, networkCPU, added, saved, smallData, largeData, sizeRatio,
                                            revalidations, staleCPU], iterations: 20)) { benchmark in
        let scenario = CacheHits(requests: 20_000)
        let first = benchmark.currentIteration % 2 == 0
        let decodeFirst = first ? scenario.decodeAlone() : nil
        let hits = await scenario.freshHits()
        let network = await scenario.network()
        let decode = decodeFirst ?? scenario.decodeAlone()
        let small = await scenario.dataHits(bytes: 1_024)
        let large = await scenario.dataHits(bytes: 1 << 20)
        let stale = await scenario.staleWhileRevalidate(callers: 10_000)
        benchmark.measurement(hitCPU, Int(hits.cpuNanosecondsEach))
        benchmark.measurement(decodeCPU, Int(decode.cpuNanosecondsEach))
        benchmark.measurement(networkCPU, Int(network.cpuNanosecondsEach))
        benchmark.measurement(added, Int(hits.cpuNanosecondsEach - decode.cpuNanosecondsEach))
        benchmark.measurement(saved, percent(network.cpuNanosecondsEach / hits.cpuNanosecondsEach))
        benchmark.measurement(smallData, Int(small.cpuNanosecondsEach))
        benchmark.measurement(largeData, Int(large.cpuNanosecondsEach))
        benchmark.measurement(sizeRatio, percent(large.cpuNanosecondsEach / small.cpuNanosecondsEach))
        benchmark.measurement(revalidations, stale.revalidations)
        benchmark.measurement(staleCPU, Int(stale.cost.cpuNanosecondsEach))
    }
}
