import Dispatch

/// The scheduler's one timer, armed for the uptime its machine asks.
final class MachineTimer: @unchecked Sendable {
    // Safety: a dispatch source may be scheduled and cancelled from any thread; the scheduler
    // arms it only under its lock, so that arms happen in the machine's order.
    private let source = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "NetworkScheduler.timer"))

    func start(_ handler: @escaping @Sendable () -> Void) {
        source.setEventHandler(handler: handler)
        source.activate()
    }

    func arm(at uptime: UInt64) {
        source.schedule(deadline: DispatchTime(uptimeNanoseconds: uptime), leeway: .milliseconds(5))
    }

    func stop() {
        source.cancel()
    }
}
