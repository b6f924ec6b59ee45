import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension RequestHandle {
    /// How a caller's request ended.
    public enum Outcome: Sendable, Equatable {
        /// The caller got its model.
        case succeeded
        /// The caller got an error.
        case failed(ServiceError)
        /// The caller was cancelled.
        case cancelled

        /// How a caller that got `error` ended.
        init(_ error: ServiceError) {
            if case .cancelled = error {
                self = .cancelled
            } else {
                self = .failed(error)
            }
        }
    }
}

/// One caller's request: cancel it, or pass it to `after:` so that other requests wait for it.
///
/// Cancelling a handle ends that caller at once with ``ServiceError/cancelled``; a network call
/// it shares with other callers goes on for them.
///
/// ```swift
/// let login = auth.send(.login(credentials)) { result in … }
/// api.send(.me, priority: .high, after: [login]) { result in … }
/// login.cancel() // the profile request then ends with .dependencyFailed(cause: .cancelled, dependency: login.id)
/// ```
public final class RequestHandle: @unchecked Sendable {
    // Safety: what is not immutable is behind `state`'s lock.

    /// Identifies this caller in events.
    public let id: RequestHandle.ID

    /// The caller's priority: the one it was sent with, until it is changed. Setting it ranks
    /// the caller again at once: a call waiting for a budget slot moves in its host's line
    /// (and may start, if it rose), and one on the wire has its task told
    /// (`URLSessionTask.priority`). A call shared with other callers runs at the highest
    /// priority among them. Setting it after the caller ended does nothing.
    ///
    /// ```swift
    /// let thumbnail = api.send(.thumbnail(of: post), priority: .high) { … }
    /// // The cell scrolled out of view:
    /// thumbnail.priority = .low
    /// ```
    public var priority: RequestPriority {
        get { state.withLock { $0.priority } }
        set { scheduler.setPriority(newValue, of: [self]) }
    }

    let scheduler: RequestScheduler
    /// What names its request once it has ended: its source without its body, and its tags.
    private let source: Submission.Source
    /// Its resource's tags (``Resource/tagged(_:)``).
    public let tags: Set<String>
    /// The fields that carry its context to its server, read as it was sent
    /// (``ContextPropagation``).
    let contextFields: HeaderFields
    /// The group that lists this caller until it ends; weak, so that releasing a group still
    /// cancels it.
    weak let group: RequestGroup?
    /// Hands the caller its result and says how it ended; nil when the caller reads the result
    /// itself (an awaiting task) and reports with ``finish(_:metrics:)``.
    private let deliver: @Sendable (CallResult, RequestHandle) -> RequestHandle.Outcome?
    /// Where its completion runs; nil to run it on the thread that ends the caller.
    private let callbacks: CallbackQueue?
    private let state: Locked<State>
    /// The caller in its scheduler's machine, once it entered it. Written under the
    /// scheduler's lock; read from any thread, since a request of another scheduler may wait
    /// for this one.
    var callerID: CallerID? {
        get { state.withLock { $0.callerID } }
        set { state.withLock { $0.callerID = newValue } }
    }

    /// The operation that sends it, if it was made as one
    /// (``APIClient/operation(for:priority:group:after:completion:)``).
    var operation: RequestOperation? {
        get { state.withLock { $0.operation } }
        set { state.withLock { $0.operation = newValue } }
    }

    /// This caller as a dependency of another, once it entered its scheduler's machine.
    var dependencyID: DependencyID? {
        callerID.map { DependencyID(machine: scheduler.machineID, caller: $0) }
    }

    typealias Observer = @Sendable (RequestHandle.Outcome) -> Void

    private enum Phase {
        case active
        case delivering
        case finished(RequestHandle.Outcome)
    }

    private struct State {
        var phase = Phase.active
        /// What sending it needs, until it ends: let go then, with whatever its body holds (a
        /// spooled file is removed once no call sends it), however long the app keeps the handle.
        var submission: Submission?
        /// Run once the caller's completion has: its dependents, its operation. Kept beside the
        /// phase, not in it, so that appending one does not copy those before it (ten
        /// thousand dependents of one request made sending them quadratic).
        var observers: [Observer] = []
        /// Written only under its scheduler's lock too, so that the machine and the handle
        /// agree on it.
        var priority: RequestPriority
        var callerID: CallerID?
        /// The operation that sends it, if it was made as one, which mirrors its priority.
        weak var operation: RequestOperation?
        /// Who watches its body's progress, and the last step: made on the first step or watcher.
        var progress: ProgressWatch?
        /// For its events: the number of the call it made or joined, once attached (noted
        /// only when a monitor listens), and the requests it waited for.
        var callNumber: Int?
        var dependencies: [RequestHandle.ID] = []
        /// Whether its begin (`enqueued` or `joined`) is decided, under its scheduler's lock,
        /// and not yet told, after it; and the end it got meanwhile on another thread, told
        /// once its begin is (see `RequestEvent.Monitor`).
        var beginUntold = false
        var endAwaitingBegin: RequestEvent?
    }

    /// Those who watch a caller's progress, and the last step told, which a watcher that comes
    /// late gets at once.
    private final class ProgressWatch {
        var callbacks: [@Sendable (TransferProgress) -> Void] = []
        var streams: [AsyncStream<TransferProgress>.Continuation] = []
        var last: TransferProgress?
    }

    init(
        id: RequestHandle.ID,
        priority: RequestPriority,
        scheduler: RequestScheduler,
        submission: Submission,
        group: RequestGroup?,
        callbacks: CallbackQueue?,
        contextFields: HeaderFields = [:],
        deliver: @escaping @Sendable (CallResult, RequestHandle) -> RequestHandle.Outcome?
    ) {
        self.id = id
        self.contextFields = contextFields
        state = Locked(State(submission: submission, priority: priority))
        self.scheduler = scheduler
        source = submission.source.withoutBody
        tags = submission.tags
        self.group = group
        self.callbacks = callbacks
        self.deliver = deliver
    }

    /// The progress of its request's body as it goes out (an upload's), each step once it is
    /// told; a sequence made late starts with the last step. It ends when the caller ends.
    /// A call shared with other callers tells each of them.
    ///
    /// ```swift
    /// let upload = api.send(.avatar(form), priority: .low) { result in … }
    /// for await progress in upload.progress {
    ///     bar.value = progress.fractionSent ?? 0
    /// }
    /// ```
    public var progress: AsyncStream<TransferProgress> {
        AsyncStream(bufferingPolicy: .bufferingNewest(1)) { continuation in
            let last: TransferProgress?? = state.withLock { state in
                guard case .active = state.phase else { return nil }
                let watch = state.progress ?? ProgressWatch()
                state.progress = watch
                watch.streams.append(continuation)
                return .some(watch.last)
            }
            guard let last else { return continuation.finish() }
            if let last { continuation.yield(last) }
        }
    }

    /// Runs `callback` with each step of its body's progress, on its callback queue (or on the
    /// thread that reports it, for a caller without one), never after its completion.
    func onProgress(_ callback: @escaping @Sendable (TransferProgress) -> Void) {
        state.withLock { state in
            let watch = state.progress ?? ProgressWatch()
            state.progress = watch
            watch.callbacks.append(callback)
        }
    }

    /// Tells the watchers of a step of its body's progress, unless the caller has ended.
    func progressed(_ progress: TransferProgress) {
        let watchers = state.withLock { state -> (hasCallbacks: Bool, streams: [AsyncStream<TransferProgress>.Continuation])? in
            guard case .active = state.phase else { return nil }
            let watch = state.progress ?? ProgressWatch()
            state.progress = watch
            watch.last = progress
            return (!watch.callbacks.isEmpty, watch.streams)
        }
        guard let watchers else { return }
        for stream in watchers.streams { stream.yield(progress) }
        guard watchers.hasCallbacks else { return }
        if let callbacks {
            callbacks.run(.progress(self, progress))
        } else {
            deliverProgress(progress)
        }
    }

    /// Runs the progress callbacks, unless the caller's completion has run (or, without a
    /// callback queue, may be running). On its callback queue, a step told before the caller
    /// ended runs before its completion, which was queued after it, even once the caller is
    /// being delivered.
    func deliverProgress(_ progress: TransferProgress) {
        let callbacks = state.withLock { state -> [@Sendable (TransferProgress) -> Void] in
            switch state.phase {
            case .active: break
            case .delivering where self.callbacks != nil: break
            case .delivering, .finished: return []
            }
            return state.progress?.callbacks ?? []
        }
        for callback in callbacks { callback(progress) }
    }

    /// Ends this caller with ``ServiceError/cancelled``, unless it has already ended.
    public func cancel() {
        scheduler.cancel([self])
    }

    /// Its request's method.
    public var method: String { source.target.method }
    /// Its request's absolute URL; nil if its resource makes none (it then fails as
    /// ``ServiceError/invalidRequest(reason:)``).
    public var url: URL? { source.target.url }

    /// The host key of its request's budget; nil if it has no absolute URL.
    var host: String? { source.host }

    /// What sending its request needs; nil once the caller has ended.
    var submission: Submission? { state.withLock { $0.submission } }

    /// This caller as its events name it.
    var eventCaller: RequestEvent.Caller {
        let (priority, callNumber, dependencies) = state.withLock { ($0.priority, $0.callNumber, $0.dependencies) }
        return RequestEvent.Caller(id: id, priority: priority, target: source.target, callNumber: callNumber,
                                   dependencies: dependencies, tags: tags)
    }

    /// Notes, for its events, the call it made or joined, under its scheduler's lock: its
    /// begin is to be told once the lock is released (``beginTold()``).
    func attached(toCall number: Int) {
        state.withLock { state in
            state.callNumber = number
            state.beginUntold = true
        }
    }

    /// Its begin has been told: returns the end it got meanwhile, to be told now, after it.
    func beginTold() -> RequestEvent? {
        state.withLock { state in
            state.beginUntold = false
            return state.endAwaitingBegin.take()
        }
    }

    /// Notes, for its events, the requests it waits for.
    func waits(for dependencies: [RequestHandle.ID]) {
        state.withLock { $0.dependencies = dependencies }
    }

    /// Records the priority its scheduler gave it, under the scheduler's lock, unless it ended.
    func adopt(_ priority: RequestPriority) {
        state.withLock { state in
            if case .active = state.phase { state.priority = priority }
        }
    }

    /// How the request ended, once its completion has run; nil before.
    public var outcome: RequestHandle.Outcome? {
        state.withLock { state in
            if case .finished(let outcome) = state.phase { return outcome }
            return nil
        }
    }

    /// Whether the request has ended and its completion has run.
    public var isFinished: Bool { outcome != nil }

    /// Runs `observer` once the caller's completion has run, or now if it already has.
    func whenFinished(_ observer: @escaping Observer) {
        let finished: RequestHandle.Outcome? = state.withLock { state in
            switch state.phase {
            case .active, .delivering:
                state.observers.append(observer)
            case .finished(let outcome):
                return outcome
            }
            return nil
        }
        if let finished { observer(finished) }
    }

    /// Delivers the caller's one outcome. The scheduler calls this once, after removing the
    /// caller from its state under the lock; a second call is a bug and is ignored.
    func complete(with result: CallResult) {
        guard claim() else { return }
        if let callbacks {
            callbacks.run(.one(self, result))
        } else {
            deliverNow(result)
        }
    }

    /// Delivers many callers' outcomes, in order, with one hop to each callback queue: for a
    /// call's joiners.
    static func complete(_ deliveries: SmallBatch<RequestScheduler.Machine.Delivery>) {
        var decodes: (call: CallID, decodes: SharedDecodes)?
        guard deliveries.count > 1 else {
            for delivery in deliveries { delivery.caller.complete(with: CallResult(delivery, sharing: &decodes)) }
            return
        }
        let results = deliveries.map { (caller: $0.caller, result: CallResult($0, sharing: &decodes)) }
        for (callbacks, queued) in claim(results, handle: \.caller, deliverNow: { $0.caller.deliverNow($0.result) }) {
            callbacks.run(queued.lazy.map { .one($0.caller, $0.result) })
        }
    }

    /// Delivers one result to many callers (a cancelled group), the same way, without a copy
    /// of the result per caller.
    static func complete(_ handles: [RequestHandle], with result: CallResult) {
        guard handles.count > 1 else {
            handles.first?.complete(with: result)
            return
        }
        for (callbacks, queued) in claim(handles, handle: { $0 }, deliverNow: { $0.deliverNow(result) }) {
            callbacks.run(.shared(queued, result))
        }
    }

    /// Claims each item's caller and delivers at once to those without a callback queue.
    /// Returns the others by queue, in order: a scheduler's callers use its queue, or none (async
    /// callers).
    private static func claim<Item>(
        _ items: some Sequence<Item>,
        handle: (Item) -> RequestHandle,
        deliverNow: (Item) -> Void
    ) -> [(CallbackQueue, [Item])] {
        var byQueue: [(CallbackQueue, [Item])] = []
        for item in items where handle(item).claim() {
            guard let queue = handle(item).callbacks else {
                deliverNow(item)
                continue
            }
            if let index = byQueue.firstIndex(where: { $0.0 === queue }) {
                byQueue[index].1.append(item)
            } else {
                byQueue.append((queue, [item]))
            }
        }
        return byQueue
    }

    /// Moves from active to delivering. The machine decides each caller's one outcome, so a
    /// second completion is its bug: an assertion in tests, and dropped in a release build
    /// rather than run twice.
    private func claim() -> Bool {
        // The submission is taken out and dropped here, outside the lock and before the
        // completion runs: a file only it held is removed then.
        let (claimed, _) = state.withLock { state -> (Bool, Submission?) in
            guard case .active = state.phase else { return (false, nil) }
            state.phase = .delivering
            return (true, state.submission.take())
        }
        assert(claimed, "caller \(id) was completed twice")
        return claimed
    }

    /// Runs the caller's completion, once it is claimed.
    func deliverNow(_ result: CallResult) {
        guard let outcome = deliver(result, self) else { return }
        finish(outcome, metrics: result.metrics)
    }

    /// Ends the caller once its completion has read its result: it leaves its group, its
    /// dependents and observers are told `outcome`, then its monitors.
    func finish(_ outcome: RequestHandle.Outcome, metrics: ResponseMetrics) {
        group?.remove(id)
        // The caller is finished only once no observer is left: one that arrives while earlier
        // ones run joins them, instead of running at once on its own thread and overtaking
        // them (a prefetch sent after an urgent dependent would then start first).
        while true {
            let (observers, progressStreams) = state.withLock { state -> ([Observer], [AsyncStream<TransferProgress>.Continuation]) in
                guard case .delivering = state.phase else { return ([], []) }
                var streams: [AsyncStream<TransferProgress>.Continuation] = []
                if state.observers.isEmpty {
                    state.phase = .finished(outcome)
                    streams = state.progress?.streams ?? []
                    state.progress = nil
                }
                defer { state.observers = [] }
                return (state.observers, streams)
            }
            for stream in progressStreams { stream.finish() }
            guard !observers.isEmpty else { break }
            for observer in observers { observer(outcome) }
        }
        // Last, so that a monitor sees a caller end only once its dependents and group know;
        // and after its begin, which the thread that attached it may not have told yet.
        guard scheduler.isMonitored else { return }
        let end = scheduler.endEvent(outcome, of: self, metrics: metrics)
        let waitsForBegin = state.withLock { state in
            guard state.beginUntold else { return false }
            state.endAwaitingBegin = end
            return true
        }
        if !waitsForBegin { scheduler.record(end) }
    }
}

extension RequestHandle {
    /// Identifies one caller: one send of an ``APIClient``.
    public struct ID: Hashable, Sendable, CustomStringConvertible {
        let value: UInt64
        /// `#` and a number, unique in the process, in the order callers were sent.
        public var description: String { "#\(value)" }
    }
}
