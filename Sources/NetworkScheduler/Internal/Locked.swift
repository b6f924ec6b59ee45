#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A value guarded by one mutex: the only way the library and its testing kit share mutable
/// state (`package`, so that the kit uses this one too).
///
/// Decisions happen inside `withLock`; callbacks, continuation resumes and KVO notifications
/// happen after it returns, so no foreign code ever runs while the lock is held.
///
/// The value and a `pthread_mutex_t` share one allocation. An `NSLock` is two more on Linux
/// (its object and its mutex), and every queued request keeps a lock: that was about 100 bytes
/// of each. A pthread mutex exists on Linux and Apple platforms alike, unlike Apple's own
/// locks, and Thread Sanitizer sees it, which it does not do for `Synchronization.Mutex` on
/// Linux (its futexes are invisible to it, and it reports false races).
package struct Locked<Value> {
    private final class Storage: ManagedBuffer<Value, pthread_mutex_t> {
        deinit {
            _ = withUnsafeMutablePointerToElements { pthread_mutex_destroy($0) }
        }
    }

    private let storage: Storage

    package init(_ value: Value) {
        storage = unsafeDowncast(Storage.create(minimumCapacity: 1) { _ in value }, to: Storage.self)
        storage.withUnsafeMutablePointerToElements { initializeMutex($0, recursive: false) }
    }

    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try storage.withUnsafeMutablePointers { value, mutex in
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            return try body(&value.pointee)
        }
    }
}

// Safety: the value is only read or written while its mutex is held, so a value that may
// cross threads may be shared through the lock.
extension Locked: @unchecked Sendable where Value: Sendable {}

/// Initializes the mutex at `mutex`. One that is not recursive spins briefly before sleeping
/// (on Linux): the locks here are held for microseconds, and a waiter put to sleep each time
/// cost more than the work it waited for.
func initializeMutex(_ mutex: UnsafeMutablePointer<pthread_mutex_t>, recursive: Bool) {
    mutex.initialize(to: pthread_mutex_t())
    var attributes = pthread_mutexattr_t()
    pthread_mutexattr_init(&attributes)
    defer { pthread_mutexattr_destroy(&attributes) }
    if recursive {
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_RECURSIVE))
    } else {
        #if canImport(Glibc)
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ADAPTIVE_NP))
        #endif
    }
    let status = pthread_mutex_init(mutex, &attributes)
    precondition(status == 0, "pthread_mutex_init failed: \(status)")
}
