import Foundation
import Testing

/// The tests that spend seconds of CPU (the fuzz, the stress tests, loops of 10,000 sends and
/// more) run one at a time, each with its loops on threads of its own. Swift Testing runs every
/// other test in parallel with them, on a cooperative pool of one thread per core: this machine
/// has two, and under the thread sanitizer everything is several times slower, so two long loops
/// on that pool once held it for 11 s and the tests waiting for events timed out.
@Suite(.serialized) enum HeavyTests {}

/// Runs `body` on a thread of its own and returns its result, so that a long synchronous loop
/// does not hold one of the cooperative pool's threads.
func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: body()) }.start()
    }
}

/// Whether the thread sanitizer instruments this process (its runtime's entry point is loaded).
let isThreadSanitized = dlsym(dlopen(nil, RTLD_NOW), "__tsan_init") != nil
