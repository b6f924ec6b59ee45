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
/// watch is kept (in a registry, one per operation) until it has told, since on Linux the watched
/// operation holds its dependents unretained.
enum OperationFinishWatch {
    /// Calls `observer` once `operation` has finished, on the thread that finished it, or at
    /// once if it has already. Every request waiting for one operation shares one watch.
    static func whenFinished(_ operation: Operation, _ observer: @escaping @Sendable (_ wasCancelled: Bool) -> Void) {
        let key = ObjectIdentifier(operation)
        let watcher: PlatformWatcher? = watchers.withLock { watchers in
            if let watching = watchers[key], watching.add(observer) { return nil }
            let watcher = PlatformWatcher(operation, first: observer)
            watchers[key] = watcher
            return watcher
        }
        watcher?.startWatching()
    }

    /// The watches of operations that have not finished, by operation (each watch holds its
    /// operation, so an identifier is not reused while it is here).
    private static let watchers = Locked<[ObjectIdentifier: PlatformWatcher]>([:])

    /// What the platforms' watches share: the operation watched, and the observers told once.
    /// An `Operation` itself, never queued: on Linux that is the signal; on Apple platforms it
    /// only observes.
    // Safety: the mutable state is behind `state`'s lock, and the observers are Sendable.
    private class Watcher: Operation, @unchecked Sendable {
        typealias Observer = @Sendable (Bool) -> Void
        let watched: Operation
        /// Whether it has told, and whom it tells.
        private let state: Locked<(hasTold: Bool, observers: [Observer])>

        init(_ operation: Operation, first observer: @escaping Observer) {
            watched = operation
            state = Locked((false, [observer]))
        }

        /// Adds an observer; false if it has told already (the operation finished meanwhile).
        func add(_ observer: @escaping Observer) -> Bool {
            state.withLock { state in
                guard !state.hasTold else { return false }
                state.observers.append(observer)
                return true
            }
        }

        /// Starts watching; a subclass's.
        func startWatching() {}

        /// Tells the observers whether the watched operation was cancelled, the first time
        /// only, after `stopWatching`; then leaves the registry.
        final func tell(stopWatching: () -> Void = {}) {
            let observers: [Observer]? = state.withLock { state in
                guard !state.hasTold else { return nil }
                state.hasTold = true
                defer { state.observers = [] }
                return state.observers
            }
            guard let observers else { return }
            stopWatching()
            let wasCancelled = watched.isCancelled
            for observer in observers { observer(wasCancelled) }
            // Later, not while Foundation may still be using this watch as it notifies.
            let key = ObjectIdentifier(watched)
            DispatchQueue.global().async { [self] in
                OperationFinishWatch.watchers.withLock { watchers in
                    if watchers[key] === self { watchers[key] = nil }
                }
            }
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
