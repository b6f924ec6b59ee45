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
        let watcher = PlatformWatcher(operation, observer)
        watcher.keepAlive()
        watcher.startWatching()
    }

    /// What the platforms' watches share: the operation watched, the observer told once, and
    /// the watch kept alive until then. An `Operation` itself, never queued: on Linux that is
    /// the signal; on Apple platforms it only observes.
    // Safety: the mutable state is behind `state`'s lock, and `observer` is Sendable.
    private class Watcher: Operation, @unchecked Sendable {
        let watched: Operation
        private let observer: @Sendable (Bool) -> Void
        /// Whether it has told, and itself until then.
        private let state = Locked<(hasTold: Bool, keptAlive: Watcher?)>((false, nil))

        init(_ operation: Operation, _ observer: @escaping @Sendable (Bool) -> Void) {
            watched = operation
            self.observer = observer
        }

        func keepAlive() {
            state.withLock { $0.keptAlive = self }
        }

        /// Starts watching; a subclass's.
        func startWatching() {}

        /// Tells the observer whether the watched operation was cancelled, the first time only,
        /// after `stopWatching`; then lets the watch go.
        final func tell(stopWatching: () -> Void = {}) {
            let isFirst = state.withLock { state in
                defer { state.hasTold = true }
                return !state.hasTold
            }
            guard isFirst else { return }
            stopWatching()
            observer(watched.isCancelled)
            // Foundation holds the watch while it asks or notifies, so it outlives this.
            state.withLock { $0.keptAlive = nil }
        }
    }
}

#if canImport(Darwin)
extension OperationFinishWatch {
    /// Key-value observation of the key `Operation` documents as observable; a Swift key path
    /// would name its Objective-C property (`finished`) instead.
    private final class PlatformWatcher: Watcher, @unchecked Sendable {
        private static let key = "isFinished"

        override func startWatching() {
            watched.addObserver(self, forKeyPath: Self.key, options: [], context: nil)
            // It may have finished before the observer was added.
            if watched.isFinished { finished() }
        }

        override func observeValue(forKeyPath keyPath: String?, of object: Any?, change: [NSKeyValueChangeKey: Any]?,
                                   context: UnsafeMutableRawPointer?) {
            if watched.isFinished { finished() }
        }

        private func finished() {
            tell { watched.removeObserver(self, forKeyPath: Self.key) }
        }
    }
}
#else
extension OperationFinishWatch {
    /// A dependent of the watched operation, never queued: Foundation asks it whether it is
    /// ready when the watched one finishes (and when it is added after that).
    private final class PlatformWatcher: Watcher, @unchecked Sendable {
        override func startWatching() {
            addDependency(watched)
        }

        override var isReady: Bool {
            let isReady = super.isReady
            if isReady { tell() }
            return isReady
        }
    }
}
#endif
