import Foundation
import Testing
@testable import NetworkScheduler

/// A request may wait for a request of another scheduler. A caller's place in one scheduler's
/// machine means nothing in another's: the dependency gates its dependent as any other, but
/// lends it no priority, and nothing of the other scheduler is read under this one's lock.
@Suite struct CrossSchedulerDependencyTests {
    /// How the foreign dependency ends.
    enum Ending: String, CaseIterable, Sendable {
        case succeeds, fails, isCancelled
    }

    /// Scheduler B holds six requests on the wire; its sixth is the dependency.
    private static func aDependencyOnAnotherScheduler() async -> (b: Harness, dependency: RequestHandle) {
        let b = Harness(budget: 6) { _ in .hold }
        var dependency: RequestHandle?
        for index in 1...6 {
            dependency = b.api.send(Resource<User>(path: "b\(index)")) { _ in }
        }
        await b.transport.arrivals.wait(for: 6)
        return (b, dependency!)
    }

    private static func end(_ dependency: RequestHandle, of b: Harness, _ ending: Ending) {
        switch ending {
        case .succeeds: b.transport.release(path: "/v1/b6", with: .json(userJSON))
        case .fails: b.transport.release(path: "/v1/b6", with: .json(#"{"message": "down"}"#, status: 500))
        case .isCancelled: dependency.cancel()
        }
    }

    /// The reproduction of the crash: the dependency's place in B names nobody in A when the
    /// dependent is sent, and one of A's own callers when the dependency ends. Taking back what
    /// was never lent trapped the process.
    @Test(arguments: Ending.allCases)
    func aDependentOfAnotherSchedulersRequestEndsAsItsDependencyDid(_ ending: Ending) async throws {
        let (b, dependency) = await Self.aDependencyOnAnotherScheduler()
        let a = Harness(budget: 1) { _ in .hold }
        let outcomes = Outcomes<User>()
        a.api.send(Resource<User>(path: "dependent"), priority: .critical, after: [dependency],
                   completion: outcomes.completion("dependent"))
        for index in 1...6 {
            a.api.send(Resource<User>(path: "a\(index)")) { _ in }
        }
        await a.transport.arrivals.wait(for: 1)

        Self.end(dependency, of: b, ending)

        switch ending {
        case .succeeds:
            // Sent once its dependency succeeded (A's seventh caller to enter its line): behind
            // A's first request, ahead of the rest.
            await a.events.enqueued.wait(for: 7)
            a.transport.release(path: "/v1/a1", with: .json(userJSON))
            let arrivals = await a.transport.arrivals.wait(for: 2)
            #expect(arrivals.map(\.path) == ["/v1/a1", "/v1/dependent"])
            a.transport.release(path: "/v1/dependent", with: .json(userJSON))
            #expect(try await outcomes.wait(for: 1)["dependent"]?.get().id == 1)
        case .fails:
            let error = await outcomes.wait(for: 1)["dependent"]?.failure
            guard case .dependencyFailed(let cause, let failed)? = error else {
                Issue.record("expected dependencyFailed, got \(String(describing: error))")
                return
            }
            #expect(cause.statusCode == 500 && cause.serverResponse?.message == "down")
            #expect(failed == dependency.id)
        case .isCancelled:
            let error = await outcomes.wait(for: 1)["dependent"]?.failure
            #expect(error == .dependencyFailed(cause: .cancelled, dependency: dependency.id))
        }
        #expect(!a.transport.arrivals.elements.contains { $0.path == "/v1/dependent" } || ending == .succeeds)
        a.scheduler.cancelAll()
        b.scheduler.cancelAll()
    }

    /// The dependency's place in B names one of A's waiting callers when the dependent is sent:
    /// that caller must not inherit the dependent's priority and jump its line.
    @Test(arguments: Ending.allCases)
    func anUnrelatedCallerHoldingTheSamePlaceInheritsNothing(_ ending: Ending) async {
        let (b, dependency) = await Self.aDependencyOnAnotherScheduler()
        let a = Harness(budget: 1) { _ in .hold }
        for index in 1...6 {
            a.api.send(Resource<User>(path: "a\(index)")) { _ in }
        }
        await a.transport.arrivals.wait(for: 1)
        let dependent = a.api.send(Resource<User>(path: "dependent"), priority: .critical, after: [dependency]) { _ in }

        a.transport.release(path: "/v1/a1", with: .json(userJSON))
        let arrivals = await a.transport.arrivals.wait(for: 2)
        #expect(arrivals.map(\.path) == ["/v1/a1", "/v1/a2"], "A's sixth request inherited a foreign dependent's priority")

        Self.end(dependency, of: b, ending)
        a.transport.release(path: "/v1/a2", with: .json(userJSON))
        await a.transport.arrivals.wait(for: 3)
        #expect(a.scheduler.state.withLock { $0.machine.invariantViolations() } == [])
        withExtendedLifetime(dependent) {}
        a.scheduler.cancelAll()
        b.scheduler.cancelAll()
    }
}
