import Dispatch
import Foundation
import Synchronization
#if canImport(MallocInterposerSwift)
import MallocInterposerSwift
#endif

/// CPU time of the whole process (every thread), in nanoseconds.
func processCPUNanoseconds() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

/// Allocations made so far while counting is on (`countingAllocations`), 0 without the
/// benchmark's malloc interposer.
func allocationCount() -> Int {
    #if canImport(MallocInterposerSwift)
    MallocInterposerSwift.getStatistics().mallocCount
    #else
    0
    #endif
}

/// Context switches of the process so far, voluntary and not.
func contextSwitches() -> Int {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    return usage.ru_nvcsw + usage.ru_nivcsw
}

/// Turns the malloc interposer's counting on for the duration of `body`: every allocation then
/// costs an atomic add, so only scenarios that report allocations turn it on.
func countingAllocations<T>(_ body: () async throws -> T) async rethrows -> T {
    #if canImport(MallocInterposerSwift)
    MallocInterposerSwift.hook()
    defer { MallocInterposerSwift.unhook() }
    #endif
    return try await body()
}

/// Uptime in nanoseconds.
func now() -> UInt64 {
    DispatchTime.now().uptimeNanoseconds
}

/// Resident memory of the process, in bytes (Linux: /proc/self/statm).
func residentBytes() -> Int {
    guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = statm.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}

/// What one run of a workload cost.
struct Cost {
    var wallNanoseconds: UInt64
    var cpuNanoseconds: UInt64
    var count: Int
    /// Allocations made meanwhile, by any thread (counted only inside `countingAllocations`).
    var allocations = 0
    var contextSwitches = 0

    var perSecond: Double { Double(count) / (Double(wallNanoseconds) / 1e9) }
    var cpuNanosecondsEach: Double { Double(cpuNanoseconds) / Double(count) }
    var allocationsEach: Double { Double(allocations) / Double(count) }
    var contextSwitchesEach: Double { Double(contextSwitches) / Double(count) }

    /// Two runs as one.
    static func + (lhs: Cost, rhs: Cost) -> Cost {
        Cost(wallNanoseconds: lhs.wallNanoseconds + rhs.wallNanoseconds, cpuNanoseconds: lhs.cpuNanoseconds + rhs.cpuNanoseconds,
             count: lhs.count + rhs.count, allocations: lhs.allocations + rhs.allocations,
             contextSwitches: lhs.contextSwitches + rhs.contextSwitches)
    }
}

/// Runs `start` and waits until `done` has been called `count` times; bounded by `timeout`.
/// `start` gets the countdown to call once per finished unit.
func measure(count: Int, timeout: Double = 120, _ start: (_ done: @escaping @Sendable () -> Void) async -> Void) async -> Cost {
    let countdown = Countdown(count)
    let (allocations, switches) = (allocationCount(), contextSwitches())
    let cpu = processCPUNanoseconds()
    let wall = now()
    await start { countdown.tick() }
    let finished = await countdown.wait(timeout: timeout)
    precondition(finished, "the workload did not finish within \(timeout) s")
    return Cost(wallNanoseconds: now() - wall, cpuNanoseconds: processCPUNanoseconds() - cpu, count: count,
                allocations: allocationCount() - allocations, contextSwitches: contextSwitches() - switches)
}

/// Counts down from `count` and wakes one waiter at zero.
final class Countdown: Sendable {
    private let state: Mutex<(remaining: Int, waiter: CheckedContinuation<Bool, Never>?, endedAt: UInt64)>

    init(_ count: Int) {
        state = Mutex((count, nil, 0))
    }

    func tick() {
        let waiter: CheckedContinuation<Bool, Never>? = state.withLock { state in
            state.remaining -= 1
            guard state.remaining == 0 else { return nil }
            state.endedAt = now()
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: true)
    }

    /// Uptime when the count reached zero; 0 before.
    var endedAt: UInt64 { state.withLock { $0.endedAt } }

    /// Waits until the count reaches zero (true) or `timeout` seconds pass (false).
    func wait(timeout: Double) async -> Bool {
        await withCheckedContinuation { continuation in
            let done = state.withLock { state -> Bool in
                if state.remaining <= 0 { return true }
                state.waiter = continuation
                return false
            }
            if done {
                continuation.resume(returning: true)
                return
            }
            DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { [self] in
                let expired = state.withLock { state in
                    defer { state.waiter = nil }
                    return state.waiter
                }
                expired?.resume(returning: false)
            }
        }
    }
}

/// The value below which `fraction` of `values` fall.
func percentile(_ fraction: Double, of values: [Double]) -> Double {
    guard !values.isEmpty else { return 0 }
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * fraction + 0.5))]
}

/// A counter any thread may take the next number from.
final class Counter: Sendable {
    private let next = Atomic(0)

    /// The next number, from 0.
    @discardableResult
    func take() -> Int {
        next.add(1, ordering: .relaxed).oldValue
    }

    /// How many numbers were taken.
    var value: Int { next.load(ordering: .relaxed) }
}

/// The process's resident memory, sampled every 2 ms on a thread of its own until stopped:
/// its peak over the level it started at.
final class PeakResident: Sendable {
    private let state = Mutex((peak: 0, isRunning: true))
    private let baseline = residentBytes()
    private let stopped = DispatchSemaphore(value: 0)

    init() {
        Thread.detachNewThread { [self] in
            while state.withLock({ $0.isRunning }) {
                let resident = residentBytes()
                state.withLock { $0.peak = max($0.peak, resident) }
                usleep(2_000)
            }
            stopped.signal()
        }
    }

    /// Stops sampling; returns the peak growth in bytes.
    func stop() -> Int {
        state.withLock { $0.isRunning = false }
        stopped.wait()
        return max(0, state.withLock { $0.peak } - baseline)
    }
}
