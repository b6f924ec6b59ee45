import Dispatch

/// The queue where a scheduler's completion handlers run, fed in batches.
///
/// Callers whose outcomes are known while earlier ones still wait for their turn join those,
/// so a burst of completions costs one hop to the queue per batch instead of one per caller
/// (a block copy, a dispatch and often a thread wake-up each). Every completion still runs on
/// the queue, in the order the scheduler ended its caller (one at a time on a serial queue,
/// the default). One batch is run per hop: what ends meanwhile waits for the next hop, behind
/// whatever else was sent to the queue.
final class CallbackQueue: Sendable {
    /// Callers to deliver to, with what each gets.
    enum Delivery: Sendable {
        case one(RequestHandle, CallResult)
        /// Many callers with the same result (a cancelled group): one copy of it for all.
        case shared([RequestHandle], CallResult)
        /// A step of a caller's progress, told before its outcome.
        case progress(RequestHandle, TransferProgress)
    }

    private struct Pending {
        var deliveries: [Delivery] = []
        /// The storage of the batch last run, kept for the next one.
        var spare: [Delivery] = []
        /// Whether a hop to the queue is on its way for `deliveries`.
        var isScheduled = false
    }

    private let queue: DispatchQueue
    private let pending = Locked(Pending())

    init(_ queue: DispatchQueue) {
        self.queue = queue
    }

    /// Runs the deliveries on the queue after those already waiting.
    func run(_ deliveries: some Sequence<Delivery>) {
        let needsHop = pending.withLock { pending in
            pending.deliveries.append(contentsOf: deliveries)
            guard !pending.isScheduled, !pending.deliveries.isEmpty else { return false }
            pending.isScheduled = true
            return true
        }
        // Capturing only `self` makes the closure without an allocation of its own.
        if needsHop { queue.async { [self] in runBatch() } }
    }

    func run(_ delivery: Delivery) {
        run(CollectionOfOne(delivery))
    }

    private func runBatch() {
        var batch: [Delivery] = []
        pending.withLock { pending in
            swap(&batch, &pending.deliveries)
            swap(&pending.deliveries, &pending.spare)
            pending.isScheduled = false
        }
        for delivery in batch {
            switch delivery {
            case let .one(handle, result):
                handle.deliverNow(result)
            case let .shared(handles, result):
                for handle in handles { handle.deliverNow(result) }
            case let .progress(handle, progress):
                handle.deliverProgress(progress)
            }
        }
        // Kept for a later batch, unless a burst grew it (a delivery is 136 bytes).
        guard batch.capacity <= 256 else { return }
        batch.removeAll(keepingCapacity: true)
        pending.withLock { $0.spare = batch }
    }
}
