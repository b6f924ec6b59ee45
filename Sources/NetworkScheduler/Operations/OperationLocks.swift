#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An ``AsyncOperation``'s two locks and what they guard, in one allocation: every attempt
/// makes an operation, and an `NSRecursiveLock` beside a ``Locked`` state was three.
///
/// - The state's mutex guards ``AsyncOperation/State`` (and a subclass's own state): it is
///   held only to read or write it, since the queue reads `isFinished` from inside
///   `didChangeValue`, on the thread that posts it.
/// - The transitions' mutex is held through a whole transition, `willChangeValue` to
///   `didChangeValue`, and guards `finishesWhenStarted`. Recursive, in case an observer moves
///   the operation on the thread that notifies it.
final class OperationLocks: ManagedBuffer<OperationLocks.Guarded, pthread_mutex_t> {
    struct Guarded {
        /// Under the state's mutex.
        var state: AsyncOperation.State
        /// Under the transitions' mutex.
        var finishesWhenStarted: Bool
    }

    private static let stateMutex = 0
    private static let transitionsMutex = 1

    static func make() -> OperationLocks {
        let locks = unsafeDowncast(create(minimumCapacity: 2) { _ in Guarded(state: .pending, finishesWhenStarted: false) },
                                   to: OperationLocks.self)
        locks.withUnsafeMutablePointerToElements { mutexes in
            initializeMutex(mutexes + stateMutex, recursive: false)
            initializeMutex(mutexes + transitionsMutex, recursive: true)
        }
        return locks
    }

    deinit {
        withUnsafeMutablePointerToElements { mutexes in
            _ = pthread_mutex_destroy(mutexes + Self.stateMutex)
            _ = pthread_mutex_destroy(mutexes + Self.transitionsMutex)
        }
    }

    /// Runs `body` with the state, under the state's mutex.
    func withState<Result>(_ body: (inout AsyncOperation.State) throws -> Result) rethrows -> Result {
        try withUnsafeMutablePointers { guarded, mutexes in
            pthread_mutex_lock(mutexes + Self.stateMutex)
            defer { pthread_mutex_unlock(mutexes + Self.stateMutex) }
            return try body(&guarded.pointee.state)
        }
    }

    /// Takes the transitions' mutex, which the thread holding it may take again.
    func lockTransitions() {
        withUnsafeMutablePointerToElements { _ = pthread_mutex_lock($0 + Self.transitionsMutex) }
    }

    func unlockTransitions() {
        withUnsafeMutablePointerToElements { _ = pthread_mutex_unlock($0 + Self.transitionsMutex) }
    }

    /// Read and written only by the thread holding the transitions' mutex.
    var finishesWhenStarted: Bool {
        get { withUnsafeMutablePointerToHeader { $0.pointee.finishesWhenStarted } }
        set { withUnsafeMutablePointerToHeader { $0.pointee.finishesWhenStarted = newValue } }
    }
}
