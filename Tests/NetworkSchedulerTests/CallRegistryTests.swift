import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import NetworkScheduler

@Suite struct CallRegistryTests {
    @Test func callsWhoseKeysShareAHashAreEachFoundAndRemovedInAnyOrder() {
        // Given three calls whose different keys share one hash, and one call with another hash.
        let first = Self.call(key: RequestKey(custom: "first", hash: 7))
        let second = Self.call(key: RequestKey(custom: "second", hash: 7))
        let third = Self.call(key: RequestKey(custom: "third", hash: 7))
        let other = Self.call(key: RequestKey(custom: "other", hash: 8))
        var registry = CallRegistry()
        for call in [first, second, third, other] { registry.insert(call) }

        // Then each key finds its own call, and a fourth key with that hash finds none.
        #expect(registry.count == 4)
        for call in [first, second, third, other] {
            #expect(registry.call(for: call.key!) === call)
        }
        #expect(registry.call(for: RequestKey(custom: "fourth", hash: 7)) == nil)

        // When calls leave from the middle of the chain, its head, and its end.
        registry.remove(second)
        #expect(registry.call(for: second.key!) == nil)
        #expect(registry.call(for: first.key!) === first)
        #expect(registry.call(for: third.key!) === third)
        registry.remove(third)
        #expect(registry.call(for: first.key!) === first)
        registry.remove(first)

        // Then only the other call is left, and removing a call twice changes nothing.
        registry.remove(first)
        #expect(registry.count == 1)
        #expect(registry.call(for: first.key!) == nil)
        #expect(registry.call(for: other.key!) === other)
    }

    private static func call(key: RequestKey) -> SchedulerState.Call {
        let urlRequest = URLRequest(url: URL(string: "https://api.test/\(UUID().uuidString)")!)
        let submission = Submission(.urlRequest(urlRequest), deduplication: .automatic)
        let caller = RequestHandle(id: RequestID(value: 1), priority: .normal, scheduler: RequestScheduler(),
                                   submission: submission, group: nil, callbacks: nil) { _ in .succeeded }
        return SchedulerState.Call(key: key, submission: submission, request: PreparedRequest(urlRequest),
                                   lane: SchedulerState.Lane(queue: OperationQueue()), firstCaller: caller)
    }
}
