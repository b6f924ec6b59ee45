import Foundation
import NetworkScheduler

/// Scenario 9: requests and the app's own operations waiting for each other, against the same
/// waits on request handles, over a stub transport that answers at once.
///
/// - Fan-in: 10,000 requests wait for one dependency, a request (its handle) or an app
///   `Operation`; measured from the dependency's end to the last dependent's delivery, and
///   the sending of the 10,000 while it runs.
/// - Pairs: 10,000 dependents each wait for their own request: a request after a handle, or
///   an app operation (in one app `OperationQueue`) after the request's operation; beside them,
///   Foundation's own floor for that shape, an app operation after an app operation that a
///   global queue finishes (as the stub answers), with no request at all.
struct OperationDependencies {
    enum Variant: String, CaseIterable {
        case fanInOnHandle = "fan-in on a request"
        case fanInOnOperation = "fan-in on an Operation"
        case pairsOfRequests = "request after request"
        case pairsOperationAfterRequest = "Operation after request"
        case pairsOperationAfterOperation = "Operation after Operation, no request"
    }

    struct Result {
        /// Sending the dependents, per dependent.
        let sendNanoseconds: Double
        /// From the dependency's end (fan-in) or the first send (pairs) to the last dependent's end, per dependent.
        let releaseNanoseconds: Double
    }

    let dependents: Int

    func run(_ variant: Variant) async -> Result {
        let transport = StubTransport(body: SchedulingCost.body)
        let api = transport.client()
        let ended = Countdown(dependents)
        let user = Resource<User>(path: "/users/1", deduplication: .disabled)
        switch variant {
        case .fanInOnHandle:
            transport.hold()
            let gate = api.send(Resource<User>(path: "/gate")) { _ in }
            await waitUntil { transport.started == 1 }
            let sendStart = now()
            for _ in 0..<dependents { api.send(user, after: [gate]) { _ in ended.tick() } }
            let released = now()
            transport.release()
            return await finish(ended, sent: released - sendStart, from: released)
        case .fanInOnOperation:
            let gate = FinishedByHand()
            let sendStart = now()
            for _ in 0..<dependents { api.send(user, after: [gate]) { _ in ended.tick() } }
            let released = now()
            gate.finishNow()
            return await finish(ended, sent: released - sendStart, from: released)
        case .pairsOfRequests:
            let start = now()
            for _ in 0..<dependents {
                let first = api.send(user) { _ in }
                api.send(user, after: [first]) { _ in ended.tick() }
            }
            return await finish(ended, sent: now() - start, from: start)
        case .pairsOperationAfterRequest:
            let appQueue = OperationQueue()
            let start = now()
            for _ in 0..<dependents {
                let first = api.operation(for: user) { _ in }
                let dependent = BlockOperation { ended.tick() }
                dependent.addDependency(first)
                appQueue.addOperation(dependent)
                first.start()
            }
            return await finish(ended, sent: now() - start, from: start)
        case .pairsOperationAfterOperation:
            let appQueue = OperationQueue()
            let start = now()
            for _ in 0..<dependents {
                let first = FinishedByHand()
                let dependent = BlockOperation { ended.tick() }
                dependent.addDependency(first)
                appQueue.addOperation(dependent)
                DispatchQueue.global().async { first.finishNow() }
            }
            return await finish(ended, sent: now() - start, from: start)
        }
    }

    private func finish(_ ended: Countdown, sent: UInt64, from start: UInt64) async -> Result {
        let finished = await ended.wait(timeout: 120)
        precondition(finished, "the dependents did not all end within 120 s")
        return Result(sendNanoseconds: Double(sent) / Double(dependents),
                      releaseNanoseconds: Double(ended.endedAt - start) / Double(dependents))
    }
}

/// An app's operation, never queued, that the benchmark finishes by hand.
private final class FinishedByHand: Operation, @unchecked Sendable {
    // Safety: `isDone` is behind `lock`.
    private let lock = NSLock()
    private var isDone = false
    override var isAsynchronous: Bool { true }
    override var isFinished: Bool { lock.withLock { isDone } }

    func finishNow() {
        willChangeValue(forKey: "isFinished")
        lock.withLock { isDone = true }
        didChangeValue(forKey: "isFinished")
    }
}
