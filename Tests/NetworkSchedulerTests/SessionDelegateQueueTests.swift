#if canImport(FoundationNetworking)
import Foundation
import FoundationNetworking
import Testing
@testable import NetworkScheduler
import NetworkSchedulerTesting

/// The delegate queue of the transport's session on Linux: FoundationNetworking's callbacks
/// arrive as closures, which must run one at a time, in the order they were added.
@Suite struct SessionDelegateQueueTests {
    /// What the closures saw: the order they ran in, and whether two ever overlapped.
    private final class Runs: @unchecked Sendable {
        // Safety: every property is behind `lock`.
        private let lock = NSLock()
        private var running = 0
        private(set) var order: [Int] = []
        private(set) var overlapped = false

        func run(_ index: Int) {
            lock.withLock {
                running += 1
                overlapped = overlapped || running > 1
            }
            // A moment inside, so that a second thread would be caught here.
            for _ in 0..<200 { _ = lock.withLock { order.count } }
            lock.withLock {
                order.append(index)
                running -= 1
            }
        }

        var snapshot: (order: [Int], overlapped: Bool) { lock.withLock { (order, overlapped) } }
    }

    @Test func closuresRunOneAtATimeInTheOrderTheyWereAdded() {
        let queue = SessionDelegateQueue()
        let runs = Runs()
        // Added from several threads at once, each thread's in its own order.
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            for step in 0..<250 { queue.addOperation { runs.run(thread * 1_000 + step) } }
        }
        queue.waitUntilAllOperationsAreFinished()
        let (order, overlapped) = runs.snapshot
        #expect(order.count == 1_000)
        #expect(!overlapped)
        for thread in 0..<4 {
            let steps = order.filter { $0 / 1_000 == thread }.map { $0 % 1_000 }
            #expect(steps == Array(0..<250))
        }
    }

    @Test func anOperationRunsOnTheSameSerialQueueAsTheClosures() {
        let queue = SessionDelegateQueue()
        let onSerial = DispatchSpecificKey<Bool>()
        queue.serial.setSpecific(key: onSerial, value: true)
        let runs = Runs()
        let elsewhere = EventLog<Int>()
        for index in 0..<300 {
            let work = { @Sendable in
                if DispatchQueue.getSpecific(key: onSerial) != true { elsewhere.append(index) }
                runs.run(index)
            }
            if index % 3 == 0 {
                queue.addOperation(BlockOperation(block: work))
            } else {
                queue.addOperation(work)
            }
        }
        queue.waitUntilAllOperationsAreFinished()
        let (order, overlapped) = runs.snapshot
        #expect(Set(order) == Set(0..<300))
        #expect(!overlapped)
        #expect(elsewhere.elements.isEmpty)
    }

    @Test func theTransportsSessionUsesIt() {
        let transport = URLSessionTransport()
        defer { transport.invalidate() }
        #expect(transport.session.delegateQueue is SessionDelegateQueue)
    }
}
#endif
