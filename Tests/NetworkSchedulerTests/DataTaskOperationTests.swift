import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import NetworkScheduler
import NetworkSchedulerTesting

@Suite struct DataTaskOperationTests {
    private let request = URLRequest(url: URL(string: "https://api.test/users/1")!)

    private func operation(
        _ transport: StubTransport,
        outcomes: EventLog<Result<TransportResponse, ServiceError>>
    ) -> DataTaskOperation {
        DataTaskOperation(request: request, transport: transport) { result in outcomes.append(result) }
    }

    @Test func movesFromPendingThroughExecutingToFinished() async throws {
        let transport = StubTransport { _ in .hold }
        let outcomes = EventLog<Result<TransportResponse, ServiceError>>()
        let operation = operation(transport, outcomes: outcomes)
        let queue = OperationQueue()
        #expect(operation.state == .pending)
        #expect(!operation.isExecuting && !operation.isFinished && operation.isAsynchronous)

        queue.addOperation(operation)
        await transport.arrivals.wait(for: 1)
        #expect(operation.state == .executing)
        #expect(operation.isExecuting)

        transport.release(with: .json(userJSON))
        let results = await outcomes.wait(for: 1)
        await queue.drained()
        #expect(operation.state == .finished)
        #expect(operation.isFinished && !operation.isExecuting)
        #expect(results.count == 1)
        #expect(try results.first?.get().statusCode == 200)
    }

    @Test func cancelledBeforeStartItFinishesWithoutTouchingTheNetwork() async {
        let transport = StubTransport()
        let outcomes = EventLog<Result<TransportResponse, ServiceError>>()
        let operation = operation(transport, outcomes: outcomes)
        operation.cancel()

        let queue = OperationQueue()
        queue.addOperation(operation)
        await queue.drained()

        #expect(operation.state == .finished)
        #expect(transport.arrivals.count == 0)
        #expect(outcomes.elements.map(\.failure) == [.cancelled])
    }

    @Test func cancellingWhileRunningCancelsTheTaskAndReportsOnce() async {
        let transport = StubTransport { _ in .hold }
        let outcomes = EventLog<Result<TransportResponse, ServiceError>>()
        let operation = operation(transport, outcomes: outcomes)
        let queue = OperationQueue()
        queue.addOperation(operation)
        await transport.arrivals.wait(for: 1)

        operation.cancel()
        operation.cancel()

        #expect(await transport.cancellations.wait(for: 1).count == 1)
        #expect(await outcomes.wait(for: 1).map(\.failure) == [.cancelled])
        await queue.drained()
        #expect(operation.state == .finished)
        #expect(outcomes.count == 1)
    }

    @Test func finishingTwiceIsHarmless() {
        let operation = AsyncOperation()
        let queue = OperationQueue()
        queue.addOperation(operation)
        queue.waitUntilAllOperationsAreFinished()
        operation.finish()
        operation.finish()
        #expect(operation.state == .finished)
    }

    @Test func operationsThatDependOnItRunOnlyAfterItFinishes() async {
        // The queue learns of the finish only through the KVO notifications.
        let transport = StubTransport { _ in .hold }
        let outcomes = EventLog<Result<TransportResponse, ServiceError>>()
        let network = operation(transport, outcomes: outcomes)
        let order = EventLog<String>()
        let dependent = BlockOperation { order.append(outcomes.count == 1 ? "after the response" : "too early") }
        dependent.addDependency(network)
        let queue = OperationQueue()
        queue.addOperation(network)
        queue.addOperation(dependent)
        await transport.arrivals.wait(for: 1)
        #expect(order.count == 0)

        transport.release(with: .json(userJSON))

        #expect(await order.wait(for: 1) == ["after the response"])
    }

    @Test func cancelledBeforeStartItReportsItsOutcomeBeforeItsDependentsRun() async {
        // The cancelled operation's completion gives a dependent that became ready too early
        // time to run first: it waits (bounded) for the dependent, which must never come.
        let transport = StubTransport()
        let order = EventLog<String>()
        let dependentRan = DispatchSemaphore(value: 0)
        let network = DataTaskOperation(request: request, transport: transport) { _ in
            _ = dependentRan.wait(timeout: .now() + 0.5)
            order.append("outcome")
        }
        let dependent = BlockOperation {
            order.append("dependent")
            dependentRan.signal()
        }
        dependent.addDependency(network)
        network.cancel()
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 2
        queue.addOperation(network)
        queue.addOperation(dependent)

        #expect(await order.wait(for: 2) == ["outcome", "dependent"])
        #expect(transport.arrivals.count == 0)
    }

    @Test func transportErrorsAreMappedOnTheWayOut() async {
        let transport = StubTransport { _ in .fail(URLError(.timedOut)) }
        let outcomes = EventLog<Result<TransportResponse, ServiceError>>()
        OperationQueue().addOperation(operation(transport, outcomes: outcomes))
        #expect(await outcomes.wait(for: 1).map(\.failure) == [.timedOut])
    }
}

extension OperationQueue {
    /// Waits, with a bound, until every operation added so far has finished.
    func drained() async {
        let done = EventLog<Void>()
        addBarrierBlock { done.append(()) }
        await done.wait(for: 1)
    }
}
