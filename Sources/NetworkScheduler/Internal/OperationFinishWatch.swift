import Foundation

/// Tells once when an `Operation` has finished, and whether it was cancelled, without putting
/// anything in a queue: a queue walks every operation it holds that is not ready on each event
/// (see DESIGN.md), so ten thousand requests waiting on operations must not be ten thousand
/// operations in one.
///
/// On Apple platforms, key-value observation of `isFinished`. On Linux, where Foundation has no
/// key-value observation, an operation of its own, never queued, that depends on the watched
/// one: Foundation asks a dependent whether it is ready each time one of its dependencies
/// finishes (and at once when it is added after that), which is the signal. Either way the
/// watch keeps itself alive until it has told, since on Linux the watched operation holds its
/// dependents unretained.
enum OperationFinishWatch {
    /// Calls `observer` once `operation` has finished, on the thread that finished it, or at
    /// once if it has already.
    static func whenFinished(_ operation: Operation, _ observer: @escaping @Sendable (_ wasCancelled: Bool) -> Void) {
        Watcher.watch(operation, observer)
    }
}

#if canImport(Darwin)
extension OperationFinishWatch {
    // Safety: `observation` and `keptAlive` are written under `lock`, and `observer` is Sendable.
    private final class Watcher: NSObject, @unchecked Sendable {
        private let lock = NSLock()
        private var observation: NSKeyValueObservation?
        private var keptAlive: Watcher?
        private var hasTold = false
        private let observer: @Sendable (Bool) -> Void

        private init(_ observer: @escaping @Sendable (Bool) -> Void) {
            self.observer = observer
        }

        static func watch(_ operation: Operation, _ observer: @escaping @Sendable (Bool) -> Void) {
            let watcher = Watcher(observer)
            watcher.lock.withLock { watcher.keptAlive = watcher }
            // `.initial` tells at once about an operation that has already finished, possibly
            // before `observe` returns.
            let observation = operation.observe(\.isFinished, options: [.initial, .new]) { operation, _ in
                if operation.isFinished { watcher.tell(wasCancelled: operation.isCancelled) }
            }
            let hasTold = watcher.lock.withLock {
                if !watcher.hasTold { watcher.observation = observation }
                return watcher.hasTold
            }
            if hasTold { observation.invalidate() }
        }

        private func tell(wasCancelled: Bool) {
            let observation: NSKeyValueObservation?? = lock.withLock {
                guard !hasTold else { return nil }
                hasTold = true
                defer { (self.observation, keptAlive) = (nil, nil) }
                return .some(self.observation)
            }
            guard let observation else { return }
            observation?.invalidate()
            observer(wasCancelled)
        }
    }
}
#else
extension OperationFinishWatch {
    // Safety: `keptAlive` and `hasTold` are written under `lock`, and `observer` is Sendable.
    private final class Watcher: Operation, @unchecked Sendable {
        private let lock = NSLock()
        private var keptAlive: Watcher?
        private var hasTold = false
        private let observer: @Sendable (Bool) -> Void
        /// The operation watched, for whether it was cancelled.
        private let watched: Operation

        private init(_ operation: Operation, _ observer: @escaping @Sendable (Bool) -> Void) {
            watched = operation
            self.observer = observer
        }

        static func watch(_ operation: Operation, _ observer: @escaping @Sendable (Bool) -> Void) {
            let watcher = Watcher(operation, observer)
            watcher.lock.withLock { watcher.keptAlive = watcher }
            watcher.addDependency(operation)
        }

        /// Foundation asks this when the watched operation finishes; true means it has.
        override var isReady: Bool {
            let isReady = super.isReady
            if isReady { tell() }
            return isReady
        }

        private func tell() {
            let isFirst = lock.withLock {
                defer { hasTold = true }
                return !hasTold
            }
            guard isFirst else { return }
            observer(watched.isCancelled)
            // Foundation holds this operation while it asks, so it outlives the question.
            lock.withLock { keptAlive = nil }
        }
    }
}
#endif
