import AsyncHTTPClient
import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NetworkScheduler
import NetworkSchedulerAsyncHTTPClient

// One screen's burst in a fresh process, for `scripts/latency-bursts.sh` (issue 62): N GETs of
// distinct URLs sent at once, each decoded as the same two-element JSON array, through one
// client at its defaults. `warm` first has the host answer one request, as after a login;
// `cold` sends the burst first. `high-in-low` sends N `.low` GETs and, 10 ms later, one `.high`.
// Prints one line: the client, the burst's wall time in seconds, and for `high-in-low` the
// `.high` GET's time to answer.
//
//     BurstProbe urlsession|ahc|scheduler-urlsession|scheduler-ahc BASE-URL N cold|warm [high-in-low]

struct Friend: Decodable, Sendable {
    let id: Int
    let name: String
}

/// What sends one GET and decodes its answer.
protocol BurstClient: Sendable {
    func get(_ path: String, priority: RequestPriority) async throws -> [Friend]
    func shutdown() async throws
}

struct RawURLSession: BurstClient {
    let base: URL
    let session = URLSession(configuration: .default)

    func get(_ path: String, priority: RequestPriority) async throws -> [Friend] {
        var request = URLRequest(url: base.appendingPathComponent(path))
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        let (data, response) = try await session.data(for: request)
        guard (response as? HTTPURLResponse)?.statusCode == 200 else { throw URLError(.badServerResponse) }
        return try JSONDecoder().decode([Friend].self, from: data)
    }

    func shutdown() async throws { session.finishTasksAndInvalidate() }
}

struct RawAsyncHTTPClient: BurstClient {
    let base: URL
    let client = HTTPClient(eventLoopGroupProvider: .singleton)

    func get(_ path: String, priority: RequestPriority) async throws -> [Friend] {
        var request = HTTPClientRequest(url: base.appendingPathComponent(path).absoluteString)
        request.headers.add(name: "Accept", value: "application/json")
        let response = try await client.execute(request, timeout: .seconds(60))
        guard response.status.code == 200 else { throw URLError(.badServerResponse) }
        let body = try await response.body.collect(upTo: 1 << 20)
        return try JSONDecoder().decode([Friend].self, from: Data(buffer: body))
    }

    func shutdown() async throws { try await client.shutdown() }
}

struct Scheduled: BurstClient {
    let api: APIClient
    let transport: AsyncHTTPClientTransport?

    init(base: URL, overAsyncHTTPClient: Bool) {
        transport = overAsyncHTTPClient ? AsyncHTTPClientTransport() : nil
        let scheduler = RequestScheduler { [transport] configuration in
            if let transport { configuration.transport = transport }
        }
        api = APIClient(baseURL: base, scheduler: scheduler)
    }

    func get(_ path: String, priority: RequestPriority) async throws -> [Friend] {
        try await api.value(for: Resource<[Friend]>(path: path), priority: priority)
    }

    func shutdown() async throws { try await transport?.shutdown() }
}

func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }
func seconds(since start: UInt64) -> Double { Double(now() - start) / 1e9 }

let arguments = CommandLine.arguments
guard (5...6).contains(arguments.count), let base = URL(string: arguments[2]), let count = Int(arguments[3]),
      ["cold", "warm"].contains(arguments[4]) else {
    print("usage: BurstProbe urlsession|ahc|scheduler-urlsession|scheduler-ahc BASE-URL N cold|warm [high-in-low]")
    exit(2)
}
let (name, isWarm, highInLow) = (arguments[1], arguments[4] == "warm", arguments.count == 6)
let client: any BurstClient = switch name {
case "urlsession": RawURLSession(base: base)
case "ahc": RawAsyncHTTPClient(base: base)
case "scheduler-urlsession": Scheduled(base: base, overAsyncHTTPClient: false)
case "scheduler-ahc": Scheduled(base: base, overAsyncHTTPClient: true)
default: fatalError("no such client: \(name)")
}

if isWarm { _ = try await client.get("items/login", priority: .normal) }
let start = now()
let high: Double? = try await withThrowingTaskGroup(of: Double?.self) { group in
    for index in 0..<count {
        group.addTask {
            let friends = try await client.get("items/\(index)", priority: highInLow ? .low : .normal)
            precondition(friends.count == 2)
            return nil
        }
    }
    if highInLow {
        group.addTask {
            try await Task.sleep(nanoseconds: 10_000_000)
            let sent = now()
            let friends = try await client.get("items/urgent", priority: .high)
            precondition(friends.count == 2)
            return seconds(since: sent)
        }
    }
    var high: Double?
    for try await answered in group { high = high ?? answered }
    return high
}
let wall = seconds(since: start)
try await client.shutdown()
print([name, String(format: "%.3f", wall), high.map { String(format: "%.3f", $0) }].compactMap { $0 }.joined(separator: " "))
