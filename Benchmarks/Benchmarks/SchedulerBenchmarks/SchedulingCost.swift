import Dispatch
import Foundation
import NetworkScheduler

/// Scenario 2: the scheduler's own cost, without sockets. `requests` distinct GETs through the
/// whole path (request building, key, dedup check, operation, transport, decode, delivery),
/// answered by a stub from a global queue, against a bare `OperationQueue` running as many
/// trivial async operations that finish from a global queue, and as many that also decode the
/// same JSON (what a hand-rolled client does for each response).
struct SchedulingCost {
    enum Variant: String, CaseIterable {
        case bareQueue = "bare OperationQueue"
        case bareQueueDecoding = "bare OperationQueue + JSON decode"
        case schedulerCompletion = "scheduler completion"
        case schedulerAsync = "scheduler async"
    }

    let requests: Int

    /// A small JSON user, as a stubbed server would send.
    static let body = Data(#"{"id":1,"name":"Ada Lovelace","email":"ada@example.com"}"#.utf8)

    func run(_ variant: Variant) async -> Cost {
        switch variant {
        case .bareQueue, .bareQueueDecoding:
            let decodes = variant == .bareQueueDecoding
            let queue = OperationQueue()
            queue.maxConcurrentOperationCount = 6
            return await measure(count: requests) { done in
                for _ in 0..<requests {
                    queue.addOperation(PlainAsyncOperation { finish in
                        DispatchQueue.global().async {
                            if decodes {
                                let user = try? JSONDecoder().decode(User.self, from: Self.body)
                                precondition(user != nil, "the stubbed body did not decode")
                            }
                            finish()
                            done()
                        }
                    })
                }
            }
        case .schedulerCompletion:
            let api = Self.client()
            return await measure(count: requests) { done in
                for index in 0..<requests {
                    api.send(Self.user(index)) { result in
                        precondition((try? result.get()) != nil, "a stubbed request failed")
                        done()
                    }
                }
            }
        case .schedulerAsync:
            let api = Self.client()
            return await measure(count: requests) { done in
                for index in 0..<requests {
                    Task {
                        let user = try? await api.value(for: Self.user(index))
                        precondition(user != nil, "a stubbed request failed")
                        done()
                    }
                }
            }
        }
    }

    private static func client() -> APIClient {
        StubTransport(body: body).client()
    }

    private static func user(_ index: Int) -> Resource<User> {
        Resource(path: "/users/\(index)")
    }
}
