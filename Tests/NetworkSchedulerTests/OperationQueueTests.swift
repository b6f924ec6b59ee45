import Foundation
import NetworkSchedulerTesting
import Testing
@testable import NetworkScheduler

/// Requests and the app's own `Operation`s, each waiting for the other.
@Suite struct OperationQueueTests {
    // MARK: - The app's operations after a request

    @Test func anAppOperationInTheAppsQueueRunsAfterTheRequestsCompletion() async {
        let harness = Harness { _ in .hold }
        let order = EventLog<String>()
        let fetch = harness.api.operation(for: Resource<User>(path: "feed")) { result in
            order.append(result.success == nil ? "failed" : "fetched")
        }
        let importer = BlockOperation { order.append("imported") }
        importer.addDependency(fetch)
        let appQueue = OperationQueue()
        appQueue.addOperation(fetch)
        appQueue.addOperation(importer)

        await harness.transport.arrivals.wait(for: 1)
        #expect(order.count == 0)
        #expect(fetch.isExecuting)
        harness.transport.release(path: "/v1/feed", with: .json(userJSON))

        #expect(await order.wait(for: 2) == ["fetched", "imported"])
        #expect(fetch.isFinished)
    }

    @Test func aRequestsOperationStartedByHandAndInNoQueueStillReleasesItsDependents() async {
        let harness = Harness()
        let order = EventLog<String>()
        let fetch = harness.api.operation(for: Resource<User>(path: "me")) { _ in order.append("fetched") }
        let importer = BlockOperation { order.append("imported") }
        importer.addDependency(fetch)
        OperationQueue().addOperation(importer)

        fetch.start()

        #expect(await order.wait(for: 2) == ["fetched", "imported"])
        #expect(harness.transport.arrivals.count == 1)
    }

    @Test func anOperationCancelledBeforeItStartsEndsItsCallerWithoutTouchingTheNetwork() async {
        let harness = Harness()
        let outcomes = Outcomes<User>()
        let order = EventLog<String>()
        let fetch = harness.api.operation(for: Resource<User>(path: "me"), completion: outcomes.completion("me"))
        let importer = BlockOperation { order.append("ran after the cancelled fetch") }
        importer.addDependency(fetch)
        fetch.cancel()
        let appQueue = OperationQueue()
        appQueue.addOperation(fetch)
        appQueue.addOperation(importer)

        #expect(await outcomes.wait(for: 1)["me"]?.failure == .cancelled)
        await order.wait(for: 1)
        #expect(harness.transport.arrivals.count == 0)
        #expect(harness.isIdle)
    }

    @Test func cancellingItsGroupBeforeTheOperationStartsEndsItUnsent() async {
        let harness = Harness()
        let outcomes = Outcomes<User>()
        let screen = RequestGroup()
        let fetch = harness.api.operation(for: Resource<User>(path: "me"), group: screen, completion: outcomes.completion("me"))

        screen.cancelAll()
        OperationQueue().addOperation(fetch)

        #expect(await outcomes.wait(for: 1)["me"]?.failure == .cancelled)
        #expect(await screen.settled(timeout: 10))
        #expect(harness.transport.arrivals.count == 0)
    }

    /// A request operation cancelled (here by its screen) while an operation of the app's it
    /// depends on still ran was let go by its queue while that operation still pointed to it:
    /// corelibs Foundation crashed the process when the app's operation finished.
    @Test func aRequestOperationCancelledWhileItsDependencyRunsEndsAtOnceAndLeavesItsQueueSafely() async {
        let harness = Harness()
        let outcomes = Outcomes<User>()
        let screen = RequestGroup()
        let appQueue = OperationQueue()
        var imports: [GateOperation] = []
        for index in 0..<200 {
            let running = GateOperation()
            let fetch = harness.api.operation(for: Resource<User>(path: "users/\(index)"), group: screen,
                                              completion: outcomes.completion("\(index)"))
            fetch.addDependency(running)
            appQueue.addOperation(fetch)
            appQueue.addOperation(running)
            imports.append(running)
        }

        // When the screen goes away while every import still runs.
        screen.cancelAll()

        // Then every caller ends at once, unsent; once the imports end, so does every operation.
        #expect(await outcomes.wait(for: 200).values.allSatisfy { $0.failure == .cancelled })
        let drained = EventLog<Void>()
        appQueue.addBarrierBlock { drained.append(()) }
        for running in imports { running.open() }
        imports = []
        #expect(await drained.wait(for: 1).count == 1)
        #expect(appQueue.operationCount == 0)
        #expect(harness.transport.arrivals.count == 0)
    }

    @Test func releasingItsGroupBeforeTheOperationStartsEndsItUnsent() async {
        let harness = Harness()
        let outcomes = Outcomes<User>()
        var screen: RequestGroup? = RequestGroup()
        let fetch = harness.api.operation(for: Resource<User>(path: "me"), group: screen, completion: outcomes.completion("me"))

        screen = nil // the screen went away: its group cancels what it lists
        OperationQueue().addOperation(fetch)

        #expect(await outcomes.wait(for: 1)["me"]?.failure == .cancelled)
        #expect(harness.transport.arrivals.count == 0)
        withExtendedLifetime(screen) {}
    }

    @Test func anOperationReleasedWithoutStartingEndsItsCallerAndLeavesItsGroup() async {
        let harness = Harness()
        let outcomes = Outcomes<User>()
        let screen = RequestGroup()
        do {
            _ = harness.api.operation(for: Resource<User>(path: "me"), group: screen, completion: outcomes.completion("me"))
        }

        #expect(await outcomes.wait(for: 1)["me"]?.failure == .cancelled)
        #expect(await screen.settled(timeout: 10))
        #expect(harness.transport.arrivals.count == 0)
    }

    @Test func cancellingOneCallersOperationLeavesTheSharedCallToTheOther() async throws {
        let harness = Harness { _ in .hold }
        let outcomes = Outcomes<User>()
        let fetch = harness.api.operation(for: Resource<User>(path: "me"), completion: outcomes.completion("operation"))
        let appQueue = OperationQueue()
        appQueue.addOperation(fetch)
        await harness.transport.arrivals.wait(for: 1)
        harness.api.send(Resource<User>(path: "me"), completion: outcomes.completion("handle"))
        await harness.events.joined.wait(for: 1)

        let finished = EventLog<String>()
        let afterFetch = BlockOperation { finished.append("fetch finished") }
        afterFetch.addDependency(fetch)
        appQueue.addOperation(afterFetch)

        fetch.cancel()
        #expect(await outcomes.wait(for: 1)["operation"]?.failure == .cancelled)
        await finished.wait(for: 1)
        harness.transport.release(path: "/v1/me", with: .json(userJSON))

        #expect(try await outcomes.wait(for: 2)["handle"]?.get().id == 1)
        #expect(harness.transport.arrivals.count == 1)
    }

    @Test func aRequestsOperationPassesItsFailureToADependentRequest() async {
        let harness = Harness { request in request.url?.path == "/v1/login" ? .json("{}", status: 500) : .json(userJSON) }
        let outcomes = Outcomes<User>()
        let login = harness.api.operation(for: Resource<User>(.post, path: "login")) { _ in }
        harness.api.send(Resource<User>(path: "me"), after: [login], completion: outcomes.completion("me"))
        login.start()

        let error = await outcomes.wait(for: 1)["me"]?.failure
        guard case .dependencyFailed(let cause, _)? = error else {
            Issue.record("expected dependencyFailed, got \(String(describing: error))")
            return
        }
        #expect(cause.statusCode == 500)
        #expect(harness.transport.arrivals.elements.map(\.path) == ["/v1/login"])
    }

    // MARK: - Priorities, both ways

    @Test func anOperationsQueuePriorityAndItsRequestsPriorityAreOne() async {
        let harness = Harness { _ in .hold }
        let fetch = harness.api.operation(for: Resource<User>(path: "me"), priority: .low) { _ in }
        let handle = (fetch as? RequestOperation)?.handle
        #expect(fetch.queuePriority == .low)

        fetch.queuePriority = .veryHigh
        #expect(handle?.priority == .critical)
        handle?.priority = .background
        #expect(fetch.queuePriority == .veryLow)

        fetch.start()
        await harness.transport.arrivals.wait(for: 1)
        fetch.queuePriority = .high
        #expect(handle?.priority == .high)
        handle?.priority = .normal
        #expect(fetch.queuePriority == .normal)
        harness.scheduler.cancelAll()
    }

    @Test func raisingAnOperationsQueuePriorityMovesItsRequestAheadInItsHostsLine() async {
        // One slot, held by a first call; a normal request waits, then the operation's low one.
        let harness = Harness(budget: 1, slotsReservedAboveLowPriority: 0) { _ in .hold }
        harness.api.send(Resource<User>(path: "first")) { _ in }
        await harness.transport.arrivals.wait(for: 1)
        harness.api.send(Resource<User>(path: "normal"), priority: .normal) { _ in }
        let prefetch = harness.api.operation(for: Resource<User>(path: "prefetch"), priority: .low) { _ in }
        prefetch.start()
        await harness.events.enqueued.wait(for: 3)

        prefetch.queuePriority = .veryHigh
        harness.transport.release(path: "/v1/first", with: .json(userJSON))

        let arrivals = await harness.transport.arrivals.wait(for: 2)
        #expect(arrivals.last?.path == "/v1/prefetch")
        harness.scheduler.cancelAll()
    }

    // MARK: - Requests after the app's operations

    @Test func aRequestWaitsInItsSchedulerForAnAppOperationInTheAppsQueue() async throws {
        let harness = Harness()
        let outcomes = Outcomes<User>()
        let migration = GateOperation()
        let appQueue = OperationQueue()
        appQueue.addOperation(migration)
        harness.api.send(Resource<User>(path: "sync"), after: [migration], completion: outcomes.completion("sync"))
        // A request sent after it reaches the server first: the dependent is waiting.
        harness.api.send(Resource<User>(path: "other"), completion: outcomes.completion("other"))
        await outcomes.wait(for: 1)
        #expect(harness.transport.arrivals.elements.map(\.path) == ["/v1/other"])
        #expect(harness.scheduler.state.withLock { $0.machine.census.callers } == 1)

        migration.open()

        #expect(try await outcomes.wait(for: 2)["sync"]?.get().id == 1)
        #expect(harness.transport.arrivals.elements.map(\.path) == ["/v1/other", "/v1/sync"])
    }

    @Test func aRequestAfterAnOperationThatHasFinishedStartsAtOnce() async throws {
        let harness = Harness()
        let outcomes = Outcomes<User>()
        let done = BlockOperation {}
        let finished = EventLog<String>()
        let afterDone = BlockOperation { finished.append("done") }
        afterDone.addDependency(done)
        let appQueue = OperationQueue()
        appQueue.addOperation(done)
        appQueue.addOperation(afterDone)
        await finished.wait(for: 1)

        harness.api.send(Resource<User>(path: "me"), after: [done], completion: outcomes.completion("me"))

        #expect(try await outcomes.wait(for: 1)["me"]?.get().id == 1)
    }

    @Test func aCancelledAppOperationFailsItsDependentWithoutTouchingTheNetwork() async {
        let harness = Harness()
        let outcomes = Outcomes<User>()
        let migration = GateOperation()
        let appQueue = OperationQueue()
        appQueue.isSuspended = true
        appQueue.addOperation(migration)
        harness.api.send(Resource<User>(path: "sync"), after: [migration], completion: outcomes.completion("sync"))

        migration.cancel()
        appQueue.isSuspended = false

        let error = await outcomes.wait(for: 1)["sync"]?.failure
        guard case .dependencyFailed(cause: .cancelled, _)? = error else {
            Issue.record("expected dependencyFailed(cause: .cancelled), got \(String(describing: error))")
            return
        }
        #expect(harness.transport.arrivals.count == 0)
        #expect(harness.isIdle)
    }

    @Test func aRequestWaitsForRequestsAndOperationsTogether() async throws {
        let harness = Harness { request in request.url?.path == "/v1/login" ? .hold : .json(userJSON) }
        let outcomes = Outcomes<User>()
        let migration = GateOperation()
        OperationQueue().addOperation(migration)
        let login = harness.api.send(Resource<User>(.post, path: "login"), completion: outcomes.completion("login"))
        harness.api.send(Resource<User>(path: "sync"), after: [login, migration], completion: outcomes.completion("sync"))
        await harness.transport.arrivals.wait(for: 1)

        harness.transport.release(path: "/v1/login", with: .json(userJSON))
        await outcomes.wait(for: 1)
        // Delivered on the same serial queue after login's dependents heard of it.
        harness.api.send(Resource<User>(path: "other"), completion: outcomes.completion("other"))
        await outcomes.wait(for: 2)
        #expect(harness.transport.arrivals.elements.map(\.path) == ["/v1/login", "/v1/other"])
        migration.open()

        #expect(try await outcomes.wait(for: 3)["sync"]?.get().id == 1)
        #expect(harness.transport.arrivals.elements.map(\.path) == ["/v1/login", "/v1/other", "/v1/sync"])
    }

    @Test func anAppOperationWaitedOnByTenThousandRequestsReleasesEveryOne() async {
        let harness = Harness()
        let count = 10_000
        let ended = EventLog<Int>()
        let migration = GateOperation()
        OperationQueue().addOperation(migration)
        for index in 0..<count {
            harness.api.send(Resource<User>(path: "item/\(index % 50)"), priority: .low, after: [migration]) { _ in ended.append(index) }
        }
        #expect(harness.transport.arrivals.count == 0)
        migration.open()
        await ended.wait(for: count)
        #expect(harness.isIdle)
    }

    @Test func aTypeOfTheAppsThatStandsForARequestMakesItsDependentWaitForThatRequest() async throws {
        // What an app may adopt RequestDependency with: a handle's work, never work of its own.
        final class ProfileLoad: RequestDependency {
            let handle: RequestHandle
            init(_ handle: RequestHandle) { self.handle = handle }
            var awaitedWork: AwaitedWork { handle.awaitedWork }
        }
        let harness = Harness { request in request.url?.path == "/v1/me" ? .hold : .json(userJSON) }
        let outcomes = Outcomes<User>()
        let load = ProfileLoad(harness.api.send(Resource<User>(path: "me"), completion: outcomes.completion("me")))
        harness.api.send(Resource<User>(path: "friends"), after: [load], completion: outcomes.completion("friends"))
        await harness.transport.arrivals.wait(for: 1)
        // A request sent later, answered while the dependent still waits.
        harness.api.send(Resource<User>(path: "other"), completion: outcomes.completion("other"))
        await outcomes.wait(for: 1)
        #expect(harness.transport.arrivals.elements.map(\.path) == ["/v1/me", "/v1/other"])

        harness.transport.release(path: "/v1/me", with: .json(userJSON))
        #expect(try await outcomes.wait(for: 3)["friends"]?.get().id == 1)
        #expect(harness.transport.arrivals.elements.map(\.path) == ["/v1/me", "/v1/other", "/v1/friends"])
    }
}
