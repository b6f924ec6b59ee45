import Dispatch
import Foundation
import NetworkScheduler

/// Scenario 13: the scheduler's cache, without sockets. (a) Fresh hits: 20,000 requests for
/// 100 users already in the cache, decoded as scenario 2 decodes them, against the decode
/// alone and against the same requests sent to the stub transport with no cache; (b) fresh
/// hits of 1 KiB and 1 MiB bodies handed over as `Data`, whose CPU would differ if a hit
/// copied its body; (c) 10,000 callers of one answer that `stale-while-revalidate` allows,
/// while its revalidation is held: the requests that reached the transport.
struct CacheHits {
    let requests: Int

    static let body = SchedulingCost.body

    /// CPU a request: fresh hits decoded into users.
    func freshHits() async -> Cost {
        let transport = StubTransport(body: Self.body, headers: ["Cache-Control": "max-age=3600"])
        let api = transport.client(cache: ResponseCache())
        await warm(api, users: 100)
        return await measure(count: requests) { done in
            for index in 0..<requests {
                api.send(Self.user(index % 100)) { result in
                    precondition((try? result.get()) != nil, "a hit failed")
                    done()
                }
            }
        }
    }

    /// CPU a request: the same requests on the wire of the stub transport, with no cache.
    func network() async -> Cost {
        let api = StubTransport(body: Self.body).client()
        return await measure(count: requests) { done in
            for index in 0..<requests {
                api.send(Self.user(index % 100)) { result in
                    precondition((try? result.get()) != nil, "a request failed")
                    done()
                }
            }
        }
    }

    /// CPU a decode of the same body: what the caller of a hit pays anyway.
    func decodeAlone() -> Cost {
        let cpu = processCPUNanoseconds()
        let wall = now()
        for _ in 0..<requests {
            precondition((try? JSONDecoder().decode(User.self, from: Self.body)) != nil, "the body did not decode")
        }
        return Cost(wallNanoseconds: now() - wall, cpuNanoseconds: processCPUNanoseconds() - cpu, count: requests)
    }

    /// CPU a fresh hit of a body of `bytes`, handed over as `Data`.
    func dataHits(bytes: Int) async -> Cost {
        let body = Data(repeating: 0x61, count: bytes)
        let api = StubTransport(body: body, headers: ["Cache-Control": "max-age=3600"]).client(cache: ResponseCache(memoryCapacity: 64 << 20))
        let resource = Resource<Data>(path: "/files/1")
        _ = try? await api.value(for: resource)
        return await measure(count: requests) { done in
            for _ in 0..<requests {
                api.send(resource) { result in
                    precondition((try? result.get())?.count == bytes, "a hit failed")
                    done()
                }
            }
        }
    }

    /// 10,000 callers of one stale answer that `stale-while-revalidate` allows, answered while
    /// its revalidation is held at the transport: how many requests reached the transport after
    /// the first load, and the cost a caller.
    func staleWhileRevalidate(callers: Int) async -> (revalidations: Int, cost: Cost) {
        let transport = StubTransport(body: Self.body, headers: ["Cache-Control": "max-age=0, stale-while-revalidate=600",
                                                                  "ETag": "\"1\""])
        let api = transport.client(cache: ResponseCache())
        _ = try? await api.value(for: Self.user(1))
        let loaded = transport.started
        transport.hold()
        let cost = await measure(count: callers) { done in
            for _ in 0..<callers {
                api.send(Self.user(1)) { result in
                    precondition((try? result.get()) != nil, "a stale answer failed")
                    done()
                }
            }
        }
        // The revalidation may not have reached the transport yet: count every one sent, once
        // the scheduler has nothing left to run.
        transport.release()
        await api.scheduler.queuesDrained()
        return (transport.started - loaded, cost)
    }

    private func warm(_ api: APIClient, users: Int) async {
        for index in 0..<users { _ = try? await api.value(for: Self.user(index)) }
    }

    private static func user(_ index: Int) -> Resource<User> {
        Resource(path: "/users/\(index)")
    }
}
