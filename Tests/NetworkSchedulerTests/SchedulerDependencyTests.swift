import Foundation
import Testing
@testable import NetworkScheduler

@Suite struct SchedulerDependencyTests {
    @Test func aDependentWaitsForItsDependencyAndUsesWhatItStored() async throws {
        let harness = Harness { _ in .hold }
        let outcomes = Outcomes<User>()
        let tokens = harness.tokens
        let login = harness.api.send(Resource<User>(.post, path: "login"), priority: .critical) { result in
            if result.success != nil { tokens.token = "secret" }
        }
        harness.api.send(Resource<User>(path: "me"), priority: .high, after: [login], completion: outcomes.completion("me"))
        await harness.transport.arrivals.wait(for: 1)
        #expect(harness.transport.heldCount == 1)

        harness.transport.release(path: "/v1/login", with: .json(userJSON))
        let arrivals = await harness.transport.arrivals.wait(for: 2)
        harness.transport.release(path: "/v1/me", with: .json(userJSON))

        #expect(arrivals.map(\.path) == ["/v1/login", "/v1/me"])
        #expect(arrivals.last?.request.value(forHTTPHeaderField: "Authorization") == "Bearer secret")
        #expect(try await outcomes.wait(for: 1)["me"]?.get().id == 1)
    }

    /// Dependents sent while their dependency's completion runs are released in the order they
    /// were sent, those that arrived during the delivery with those after: an urgent one sent
    /// first never finds a prefetch sent after it on the wire ahead of it.
    @Test func dependentsSentWhileTheirDependencyEndsAreReleasedInTheOrderSent() async {
        var overtaken: [Int] = []
        for round in 0..<300 {
            // A budget of two, of which low priority may take one: the two urgent dependents
            // take both slots if they are released first.
            let harness = Harness(budget: 2) { request in request.url?.path == "/v1/login" ? .json(userJSON) : .hold }
            let login = harness.api.send(Resource<User>(.post, path: "login"), priority: .critical) { result in
                // Some work in the completion, as an app does, to widen the window.
                _ = (0..<200).map { String($0) }.joined()
            }
            for path in ["me", "friends"] {
                harness.api.send(Resource<User>(path: path), priority: .high, after: [login]) { _ in }
            }
            for page in 1...3 {
                harness.api.send(Resource<User>(path: "feed/\(page)"), priority: .low, after: [login]) { _ in }
            }
            let arrivals = await harness.transport.arrivals.wait(for: 3)
            if Set(arrivals.dropFirst().map(\.path)) != ["/v1/me", "/v1/friends"] { overtaken.append(round) }
            harness.scheduler.cancelAll()
        }
        #expect(overtaken.isEmpty, "a prefetch started before an urgent dependent in rounds \(overtaken)")
    }

    /// A prefetch that an urgent request waits for is raised and runs first; when it ends, the
    /// slot it frees waits for the urgent request (released once the prefetch's completion has
    /// run), rather than going to a normal call that was waiting.
    @Test func aCriticalDependentTakesTheSlotItsDependencyFreedBeforeAWaitingNormalCall() async {
        let harness = Harness(budget: 1, slotsReservedAboveLowPriority: 0) { request in
            request.url?.path == "/v1/prefetch" ? .hold : .json(userJSON)
        }
        let outcomes = Outcomes<User>()
        let prefetch = harness.api.send(Resource<User>(path: "prefetch"), priority: .background) { _ in }
        await harness.transport.arrivals.wait(for: 1)
        harness.api.send(Resource<User>(path: "normal"), completion: outcomes.completion("normal"))
        harness.api.send(Resource<User>(path: "urgent"), priority: .critical, after: [prefetch], completion: outcomes.completion("urgent"))
        await harness.events.enqueued.wait(for: 2)

        harness.transport.release(path: "/v1/prefetch", with: .json(userJSON))

        await outcomes.wait(for: 2)
        #expect(harness.transport.arrivals.elements.map(\.path) == ["/v1/prefetch", "/v1/urgent", "/v1/normal"])
    }

    @Test func aFailedDependencyFailsTheDependentWithoutTouchingTheNetwork() async {
        let harness = Harness { request in request.url?.path == "/v1/login" ? .json(#"{"message": "bad password"}"#, status: 401) : .json(userJSON) }
        let outcomes = Outcomes<User>()
        let login = harness.api.send(Resource<User>(.post, path: "login")) { _ in }
        harness.api.send(Resource<User>(path: "me"), after: [login], completion: outcomes.completion("me"))

        let error = await outcomes.wait(for: 1)["me"]?.failure
        #expect(error?.rootCause.statusCode == 401)
        guard case .dependencyFailed(let cause, let dependency)? = error else {
            Issue.record("expected dependencyFailed, got \(String(describing: error))")
            return
        }
        #expect(cause.statusCode == 401)
        #expect(dependency == login.id)
        #expect(harness.transport.arrivals.elements.map(\.path) == ["/v1/login"])
    }

    @Test func aCancelledDependencyFailsTheDependentNamingTheCancellation() async {
        let harness = Harness { _ in .hold }
        let outcomes = Outcomes<User>()
        let login = harness.api.send(Resource<User>(.post, path: "login")) { _ in }
        harness.api.send(Resource<User>(path: "me"), after: [login], completion: outcomes.completion("me"))

        login.cancel()

        #expect(await outcomes.wait(for: 1)["me"]?.failure == .dependencyFailed(cause: .cancelled, dependency: login.id))
        #expect(harness.transport.arrivals.elements.allSatisfy { $0.path == "/v1/login" })
    }

    @Test func failuresCascadeDownAChainAsOneFlatError() async {
        let harness = Harness { _ in .fail(URLError(.notConnectedToInternet)) }
        let outcomes = Outcomes<User>()
        let first = harness.api.send(Resource<User>(path: "first")) { _ in }
        let second = harness.api.send(Resource<User>(path: "second"), after: [first]) { _ in }
        harness.api.send(Resource<User>(path: "third"), after: [second], completion: outcomes.completion("third"))

        let error = await outcomes.wait(for: 1)["third"]?.failure
        #expect(error == .dependencyFailed(cause: .noConnection(URLError(.notConnectedToInternet)), dependency: second.id))
        #expect(error?.rootCause == .noConnection(URLError(.notConnectedToInternet)))
        #expect(harness.transport.arrivals.count == 1)
    }

    @Test func aDependencyThatAlreadySucceededReleasesTheDependentAtOnce() async throws {
        let harness = Harness()
        let outcomes = Outcomes<User>()
        let done = harness.api.send(Resource<User>(path: "first"), completion: outcomes.completion("first"))
        _ = await outcomes.wait(for: 1)
        await harness.events.ended.wait(for: 1)

        let user = try await harness.api.value(for: Resource<User>(path: "second"), after: [done])
        #expect(user.id == 1)
    }

    @Test func dependenciesWorkAcrossHostsAndPriorities() async {
        let harness = Harness(budget: 1) { _ in .hold }
        let outcomes = Outcomes<User>()
        let upload = harness.api.send(Resource<User>(path: "https://upload.test/photo"), priority: .background) { _ in }
        harness.api.send(Resource<User>(path: "posts"), priority: .critical, after: [upload], completion: outcomes.completion("post"))
        await harness.transport.arrivals.wait(for: 1)

        harness.transport.release(with: .json(userJSON))
        let arrivals = await harness.transport.arrivals.wait(for: 2)
        harness.transport.release(with: .json(userJSON))

        #expect(arrivals.map { $0.request.url?.host } == ["upload.test", "api.test"])
        #expect(await outcomes.wait(for: 1)["post"]?.success != nil)
    }

    /// Behind a busy slot: a normal request, then a background upload, then a critical post
    /// that waits for the upload.
    private func anUrgentPostWaitingForABackgroundUpload(_ harness: Harness) async -> RequestHandle {
        harness.api.send(Resource<User>(path: "blocker")) { _ in }
        await harness.transport.arrivals.wait(for: 1)
        harness.api.send(Resource<User>(path: "normal")) { _ in }
        let upload = harness.api.send(Resource<User>(path: "upload"), priority: .background) { _ in }
        return harness.api.send(Resource<User>(path: "post"), priority: .critical, after: [upload]) { _ in }
    }

    @Test func aDependencyIsLiftedToItsWaitingDependentsPriority() async {
        let harness = Harness(budget: 1) { _ in .hold }
        let post = await anUrgentPostWaitingForABackgroundUpload(harness)

        harness.transport.release(with: .json(userJSON))
        #expect(await harness.transport.arrivals.wait(for: 2).last?.path == "/v1/upload")
        #expect(harness.transport.priorities.elements.last?.priority == .critical)
        withExtendedLifetime(post) {}
    }

    @Test func aLiftedDependencyDropsBackWhenItsDependentLeaves() async {
        let harness = Harness(budget: 1) { _ in .hold }
        let post = await anUrgentPostWaitingForABackgroundUpload(harness)

        post.cancel()
        harness.transport.release(with: .json(userJSON))
        #expect(await harness.transport.arrivals.wait(for: 2).last?.path == "/v1/normal")
    }

    @Test func aDependentCancelledWhileWaitingNeverRuns() async {
        let harness = Harness { _ in .hold }
        let outcomes = Outcomes<User>()
        let login = harness.api.send(Resource<User>(.post, path: "login")) { _ in }
        let me = harness.api.send(Resource<User>(path: "me"), after: [login], completion: outcomes.completion("me"))
        await harness.transport.arrivals.wait(for: 1)

        me.cancel()
        #expect(await outcomes.wait(for: 1)["me"]?.failure == .cancelled)

        harness.transport.release(with: .json(userJSON))
        await harness.events.ended.wait(for: 2)
        #expect(harness.transport.arrivals.count == 1)
        #expect(outcomes.log.count == 1)
    }
}

extension HeavyTests {
    @Suite struct DependencyChainTests {
        @Test func aChainOf100000FailingDependentsEndsWithoutExhaustingTheStack() async {
            // Each error used to nest its dependency's: reading the root cause at 30,000 and
            // releasing the last handle at 100,000 overflowed the stack.
            let harness = Harness { _ in .fail(URLError(.notConnectedToInternet)) }
            let outcomes = Outcomes<User>()
            await onOwnThread {
                var last = harness.api.send(Resource<User>(path: "root")) { _ in }
                for _ in 1..<99_999 {
                    last = harness.api.send(Resource<User>(path: "link"), after: [last]) { _ in }
                }
                harness.api.send(Resource<User>(path: "last"), after: [last], completion: outcomes.completion("last"))
            }
            let error = await outcomes.log.wait(for: 1, timeout: 300).first?.result.failure
            #expect(error?.rootCause == .noConnection(URLError(.notConnectedToInternet)))
            if case .dependencyFailed(let cause, _)? = error, case .dependencyFailed = cause {
                Issue.record("a dependency failure nests another")
            }
            #expect(harness.transport.arrivals.count == 1)
        }
    }
}
