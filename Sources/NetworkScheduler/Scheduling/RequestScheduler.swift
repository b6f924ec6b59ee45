import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Runs requests as operations: by priority, within a per-host budget, after their
/// dependencies, sharing one network call between identical requests. Its decisions are its
/// `SchedulerMachine`'s; it performs them. Apps send through the ``APIClient``s that share it.
///
/// ```swift
/// let scheduler = RequestScheduler()
/// let api = APIClient(baseURL: URL(string: "https://api.example.com")!, scheduler: scheduler)
/// let screen = RequestGroup()
///
/// let login = api.send(.login(credentials), priority: .critical) { result in … }
/// api.send(.me, priority: .high, group: screen, after: [login]) { result in … }
/// api.send(.feed(page: 2), priority: .low, group: screen) { result in … }
///
/// screen.cancelAll() // or let it go: a group cancels its requests when it is deinitialised
/// scheduler.cancelAll() // every request of every client, when the user logs out
/// ```
///
/// Completions run on ``Configuration-swift.struct/callbackQueue``, a serial queue of the
/// scheduler's own unless you pass another (or none, for the thread that ends each caller);
/// never on the main queue unless you ask for it.
public final class RequestScheduler: Sendable {
    /// How this scheduler was set up.
    public let configuration: Configuration
    /// Each host's budget: the most attempts it runs at once to one host.
    public let hostBudget: Int

    /// ``Configuration-swift.struct/headersIgnoredByDeduplication``, matched whatever their case:
    /// the headers that ``RequestIdentity`` does not count.
    let headersIgnoredByDeduplication: HeaderNames
    /// Those, and the request's directives to the cache, which the cache's key does not count.
    let headersIgnoredByTheCache: HeaderNames
    /// Those of ``Configuration-swift.struct/credentialHeaders`` that a redirect elsewhere
    /// does not drop already (``TransportPolicy/credentialHeaders``): the app's own, which each
    /// attempt's policy adds. Usually none, so that an attempt copies no list of names.
    let addedCredentialHeaders: [String]
    typealias Machine = SchedulerMachine<RequestHandle, ScheduledRequest, Result<TransportResponse, ServiceError>>
    /// Every decision (see ``SchedulerMachine``), and the attempts' operations.
    let state: Locked<Core>
    /// The calls whose first caller the monitors have not heard of yet, and their joiners.
    let announcements = CallAnnouncements()
    /// Its machine's ID, which a dependent of another scheduler tells apart from its own.
    let machineID: MachineID
    /// Runs the attempts' operations, and nothing else: the machine decides when each starts.
    let attempts = OperationQueue()
    /// Tells the time, and fires the timer when the machine asks (an attempt's deadline, the
    /// end of a backoff).
    package let clock: any SchedulerClock
    private let timer: any SchedulerTimer
    /// Runs completion handlers on ``Configuration-swift.struct/callbackQueue``; nil to run each
    /// on the thread that ends its caller.
    let callbacks: CallbackQueue?
    /// Shared by every scheduler, so that an ID names one caller in the whole process: a group
    /// or a monitor may see the callers of several schedulers.
    private static let lastID = Locked<UInt64>(0)
    /// Tells this scheduler's machine from the others, whose callers a dependent may wait for.
    private static let lastMachineID = Locked<UInt64>(0)

    /// A scheduler with the given configuration.
    ///
    /// - Parameter configuration: how it sends and reports.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        clock = configuration.clock
        timer = clock.makeTimer()
        callbacks = configuration.callbackQueue.map(CallbackQueue.init)
        let ignored = RequestIdentity.ignoredNames(configuration.headersIgnoredByDeduplication,
                                                   credentials: configuration.credentialHeaders)
        headersIgnoredByDeduplication = HeaderNames(ignored)
        headersIgnoredByTheCache = HeaderNames(ignored.union(RequestIdentity.cacheDirectives))
        addedCredentialHeaders = configuration.credentialHeaders.filter { name in
            !TransportPolicy.credentialHeaders.contains { HeaderFields.isSameName($0, name) }
        }.sorted()
        let transportLimit = max(1, configuration.transport.maximumConnectionsPerHost)
        hostBudget = min(
            max(1, configuration.hostBudget ?? transportLimit),
            transportLimit
        )
        let reserved = min(max(0, configuration.slotsReservedAboveLowPriority), hostBudget - 1)
        machineID = MachineID(value: Self.lastMachineID.withLock { id in
            id += 1
            return id
        })
        state = Locked(Core(machine: Machine(id: machineID, budget: hostBudget,
                               lowPriorityBudget: hostBudget - reserved,
                               streamBudget: max(1, configuration.streamsPerHost),
                               multiplexedBudget: max(1, configuration.multiplexedHostBudget),
                               // A budget set by hand holds at every distance.
                               distantBudget: configuration.hostBudget == nil
                                   ? max(1, configuration.transport.maximumConnectionsPerDistantHost) : hostBudget,
                               maximumWaits: configuration.maximumWait,
                               lineLimit: configuration.maximumWaitingPerHost.map { max(1, $0) },
                               keptOutcomeWindow: configuration.keptOutcomeWindow,
                               healthPolicy: configuration.hostHealth, rateLimits: configuration.rateLimits,
                               cancellationGrace: configuration.cancellationGrace,
                               // The events of starts, retries and promotions name the callers.
                               namesCallers: !configuration.eventMonitors.isEmpty,
                               jitterSeed: .random(in: .min ... .max))))
        if configuration.cache != nil { (configuration.transport as? URLSessionTransport)?.leaveCachingToTheScheduler() }
        attempts.name = "NetworkScheduler attempts"
        timer.start { [weak self] in self?.timerFired() }
        // A transport shut down ends every caller waiting for it, at once: one backing off
        // for a minute's `Retry-After` would otherwise learn of it only when it is sent.
        configuration.transport.lifecycle.whenClosed { [weak self] in self?.cancelAll() }
        if let monitor = configuration.connectivityMonitor {
            setConnected(monitor.isConnected)
            monitor.start { [weak self] isConnected in self?.setConnected(isConnected) }
        }
    }

    deinit {
        timer.stop()
    }

    private func setConnected(_ isConnected: Bool) {
        let now = clock.uptimeNanoseconds
        feed { $0.connectivityChanged(isConnected: isConnected, now: now) }
    }

    /// A scheduler with the default configuration, adjusted by `configure`.
    ///
    /// - Parameter configure: changes the default configuration.
    public convenience init(_ configure: (inout Configuration) -> Void) {
        var configuration = Configuration()
        configure(&configuration)
        self.init(configuration: configuration)
    }

    /// Sends an endpoint; `completion` gets its model or error on the callback queue. Apps send
    /// through ``APIClient/send(_:priority:group:after:progress:completion:)``, which documents the
    /// parameters.
    @discardableResult
    func send<Model>(
        _ request: ResolvedResource<Model>,
        priority: RequestPriority = .normal,
        group: RequestGroup? = nil,
        after dependencies: [any RequestDependency] = [],
        progress: (@Sendable (TransferProgress) -> Void)? = nil,
        completion: @escaping @Sendable (Result<Model, ServiceError>) -> Void
    ) -> RequestHandle {
        enqueue(request, priority: priority, group: group, after: dependencies,
                callbacks: callbacks, progress: progress, completion: .model(completion))
    }

    // MARK: - The path of one request

    /// What a caller is handed: its model, its model with the response, or the call's result
    /// as it is, for an awaiting task to read. One enum rather than a closure adapting one to
    /// the other, which would be an allocation per request.
    enum Completion<Model: Sendable>: Sendable {
        case model(@Sendable (Result<Model, ServiceError>) -> Void)
        case reply(@Sendable (Result<Reply<Model>, ServiceError>) -> Void)
        /// The result unread, with its caller: the awaiting task decodes it on its own thread
        /// (not the transport's), then ends the caller with ``RequestHandle/finish(_:metrics:)``.
        case handOver(@Sendable (CallResult, RequestHandle) -> Void)

        /// Reads the call's result with the caller's own request (its status codes, its model),
        /// hands the caller what it asked for, and says how the caller ended; nil when the
        /// caller reads it itself.
        func deliver(_ callResult: CallResult, to handle: RequestHandle, readingWith reading: ResponseReading<Model>) -> RequestHandle.Outcome? {
            switch self {
            case .model(let completion):
                do throws(ServiceError) {
                    completion(.success(try Self.model(of: callResult, readingWith: reading)))
                    return .succeeded
                } catch {
                    completion(.failure(error))
                    return RequestHandle.Outcome(error)
                }
            case .reply(let completion):
                let (reply, outcome) = Self.reply(of: callResult, readingWith: reading)
                completion(reply)
                return outcome
            case .handOver(let completion):
                completion(callResult, handle)
                return nil
            }
        }

        /// The model with the response, and how its caller ended. Apart from `deliver`, whose
        /// every call would otherwise look up the generic types of this path too (`Reply<Model>`
        /// and its `Result`).
        @inline(never)
        static func reply(
            of callResult: CallResult,
            readingWith reading: ResponseReading<Model>
        ) -> (Result<Reply<Model>, ServiceError>, RequestHandle.Outcome) {
            do throws(ServiceError) {
                let model = try model(of: callResult, readingWith: reading)
                let payload = try callResult.outcome.get()
                return (.success(Reply(value: model, head: payload.head, metrics: callResult.metrics)), .succeeded)
            } catch {
                return (.failure(error), RequestHandle.Outcome(error))
            }
        }

        private static func model(of callResult: CallResult, readingWith reading: ResponseReading<Model>) throws(ServiceError) -> Model {
            try reading.model(from: callResult.outcome.get(), idempotencyKey: callResult.idempotencyKey,
                              sharing: callResult.sharedDecodes)
        }
    }

    func enqueue<Model>(
        _ request: ResolvedResource<Model>,
        priority: RequestPriority,
        group: RequestGroup?,
        after dependencies: [any RequestDependency],
        callbacks: CallbackQueue?,
        progress: (@Sendable (TransferProgress) -> Void)? = nil,
        completion: Completion<Model>
    ) -> RequestHandle {
        let handle = makeHandle(request, priority: priority, group: group, callbacks: callbacks, completion: completion)
        // Before it is sent, so that no step goes untold.
        if let progress { handle.onProgress(progress) }
        admit(handle, after: dependencies)
        return handle
    }

    /// A caller for `request`, not yet in the machine: ``admit(_:after:)`` sends it.
    func makeHandle<Model>(
        _ request: ResolvedResource<Model>,
        priority: RequestPriority,
        group: RequestGroup?,
        callbacks: CallbackQueue?,
        completion: Completion<Model>
    ) -> RequestHandle {
        let id = nextID()
        // Read here, on the sender's thread and in its task, where its context is.
        let contextFields = request.submission.contextPropagation?
            .fields(for: RequestEvent.Caller(id: id, priority: priority, target: request.submission.target,
                                             tags: request.submission.tags)) ?? [:]
        return RequestHandle(
            id: id,
            priority: priority,
            scheduler: self,
            submission: request.submission,
            group: group,
            callbacks: callbacks,
            contextFields: contextFields
        ) { [reading = request.reading] callResult, handle in
            completion.deliver(callResult, to: handle, readingWith: reading)
        }
    }

    /// Sends a caller made by ``makeHandle(_:priority:group:callbacks:completion:)``: at once,
    /// or once its dependencies have succeeded, waiting in the machine meanwhile. It is listed
    /// in its group (``RequestHandle/group``) as it enters the machine.
    func admit(_ handle: RequestHandle, after dependencies: [any RequestDependency]) {
        guard !dependencies.isEmpty else {
            submit(handle, listingIn: handle.group)
            return
        }
        let prerequisites = dependencies.map(\.awaitedWork)
        if isMonitored {
            handle.waits(for: prerequisites.compactMap { $0.request?.id })
        }
        // Nil once the caller has ended: a request's operation cancelled before it started.
        guard let submission = handle.submission else { return }
        let now = clock.uptimeNanoseconds
        feed { machine in
            // Listed as it enters the machine (see `RequestGroup.insert`); those of its
            // dependencies that are this scheduler's requests and still here inherit its
            // priority while it waits for them (one that has not entered its machine yet
            // inherits nothing, nor does an operation).
            let isSuspended = handle.group?.insert(handle) ?? false
            let waited = prerequisites.compactMap { $0.request?.dependencyID }
            let (id, actions) = machine.add(handle, number: handle.id.value, priority: handle.priority, dependencies: prerequisites.count,
                                            waitingFor: waited, host: handle.host, opensStream: submission.opensStream,
                                            isSuspended: isSuspended, within: submission.deadline, now: now)
            handle.callerID = id
            return actions
        }
        for prerequisite in prerequisites {
            switch prerequisite.work {
            case .request(let dependency):
                dependency.whenFinished { [self, id = dependency.id] outcome in dependencyFinished(handle, id, outcome) }
            case .operation(let operation):
                // A request's operation names its request and passes on its outcome; another
                // operation gets an ID of its own, and succeeds unless it was cancelled.
                let requestOperation = operation as? RequestOperation
                let id = requestOperation?.handle.id ?? nextID()
                // Weakly: an operation may never finish, and must not keep a dependent that has
                // ended (cancelled, past its deadline), nor its scheduler. One still waiting is
                // kept by the machine.
                OperationFinishWatch.whenFinished(operation) { [weak self, weak handle] wasCancelled in
                    guard let self, let handle else { return }
                    let outcome = requestOperation?.outcome ?? (wasCancelled ? .cancelled : .succeeded)
                    dependencyFinished(handle, id, outcome)
                }
            }
        }
    }

    private func dependencyFinished(_ handle: RequestHandle, _ dependency: RequestHandle.ID, _ outcome: RequestHandle.Outcome) {
        switch outcome {
        case .succeeded:
            let now = clock.uptimeNanoseconds
            let ready = feed { machine in handle.callerID.map { machine.dependencySucceeded($0, now: now) } ?? (nil, Machine.Actions()) }
            // Built outside the lock, with the token its dependencies may have stored.
            if let ready { submit(ready) }
        case .failed(let error):
            // Flat: a chain of 100,000 dependents nests no error in another.
            fail(handle, with: .dependencyFailed(cause: error.rootCause, dependency: dependency))
        case .cancelled:
            fail(handle, with: .dependencyFailed(cause: .cancelled, dependency: dependency))
        }
    }

    /// Prepares the caller's request and attaches it to a call: a new one, or the identical
    /// one in flight. A caller that waited for dependencies is in the machine already; a new
    /// one enters it here, and `group` lists it before a monitor hears of it.
    func submit(_ handle: RequestHandle, listingIn group: RequestGroup? = nil) {
        // Nil once the caller has ended (cancelled as its dependency succeeded): nothing to send.
        guard let submission = handle.submission else { return }
        var request: PreparedRequest
        do throws(ServiceError) {
            request = try submission.prepare(context: handle.contextFields)
        } catch {
            fail(handle, with: error)
            return
        }
        let terms = submission.terms(defaultSize: configuration.maximumResponseSize)
        // First: a caller the cache answers needs nothing more.
        guard case .send(let cacheContext) = consultCache(for: handle, submission, request, terms: terms) else { return }
        // Made before taking the lock, which every request and every completion takes.
        let key = request.key(submission.deduplication, ignoring: headersIgnoredByDeduplication, terms: terms,
                              destination: submission.downloadDestination)
        // After the key: the cache's conditional fields do not change what is asked.
        if let cacheContext { request.send(for: cacheContext) }
        // A new call's key, shared by its joiners and every attempt; not part of the call's key.
        if submission.sendsIdempotencyKey, request.header("idempotency-key") == nil {
            request.setValue(UUID().uuidString, forHTTPHeaderField: "Idempotency-Key")
        }
        let scheduled = ScheduledRequest(request, of: submission)
        let now = clock.uptimeNanoseconds
        feed(announcing: { (attachment: Machine.Attachment, waitsForTheCall: Bool) in
            switch attachment {
            case .gone: break
            case .joined(_, let lastStep):
                if !waitsForTheCall { record(.joined(handle.eventCaller)) }
                if let lastStep { handle.progressed(lastStep) }
            case .created: record(.enqueued(handle.eventCaller))
            }
            // An end that another thread decided meanwhile is told after the begin.
            if isMonitored, attachment.call != nil, !waitsForTheCall, let end = handle.beginTold() { record(end) }
            if case .created(let call) = attachment, isMonitored {
                for joiner in announcements.told(call.number) { tellJoined(joiner) }
            }
        }) { machine in
            let attachment: Machine.Attachment
            let actions: Machine.Actions
            if let id = handle.callerID {
                (attachment, actions) = machine.attach(id, request: scheduled, key: key, now: now)
            } else {
                // Listed as it enters the machine: see `RequestGroup.insert`.
                let isSuspended = group?.insert(handle) ?? false
                let id: CallerID
                (id, attachment, actions) = machine.submit(handle, number: handle.id.value, priority: handle.priority, isSuspended: isSuspended,
                                                           request: scheduled, key: key, within: submission.deadline,
                                                           now: now)
                handle.callerID = id
            }
            var waitsForTheCall = false
            if isMonitored, let call = attachment.call {
                handle.attached(toCall: call.number)
                // Under the lock, so that no joiner can attach before the call is marked untold.
                switch attachment {
                case .created: announcements.made(call.number)
                case .joined: waitsForTheCall = announcements.waits(handle, forCall: call.number)
                case .gone: break
                }
            }
            return ((attachment, waitsForTheCall), actions)
        }
    }

    /// Tells the monitors that `joiner` joined its call, and how it ended if that was decided
    /// meanwhile: after its call's first caller was told.
    private func tellJoined(_ joiner: RequestHandle) {
        record(.joined(joiner.eventCaller))
        if let end = joiner.beginTold() { record(end) }
    }

    /// What the scheduler's lock guards: its machine, and the operations of the attempts the
    /// machine started, which only the scheduler holds.
    struct Core: Sendable {
        var machine: Machine
        var operations = AttemptOperations()
        /// Callers of ``RequestScheduler/queuesDrained()`` waiting for the last attempt's
        /// operation to report its end.
        var drainWaiters: [CheckedContinuation<Void, Never>] = []

        /// The drain waiters to resume, once no attempt has an operation.
        mutating func idleDrainWaiters() -> [CheckedContinuation<Void, Never>] {
            guard !drainWaiters.isEmpty, operations.count == 0 else { return [] }
            defer { drainWaiters = [] }
            return drainWaiters
        }
    }

    /// Feeds an event to the machine under the lock, and there records the attempts it started
    /// and finds the operations of those it cancelled or re-ranked (an operation being made
    /// when it is cancelled runs cancelled); then, unlocked, tells the monitors what the event
    /// itself was (`announce`, with its own result) and does what the machine decided: runs
    /// the new attempts' operations and tells the callers. `ending` is the attempt whose
    /// operation reported the event, which the scheduler forgets; `expiring`, those the event
    /// ended at their deadline, forgotten too (they may never report) and cancelled.
    @discardableResult
    func feed<Result>(
        ending attempt: AttemptID? = nil,
        expiring expired: (Result) -> [AttemptID] = { _ in [] },
        announcing announce: (Result) -> Void = { _ in },
        _ event: (inout Machine) -> (Result, Machine.Actions)
    ) -> Result {
        let (result, actions, effects, drained) = state.withLock { core in
            if let attempt { core.operations.ended(attempt) }
            let (result, actions) = event(&core.machine)
            let locked = actions.locked
            var effects = OperationEffects()
            // Made here, in the event that starts them: a second turn of the lock to store
            // them would let a later event find an attempt without its operation.
            for start in locked.starts {
                let operation = makeOperation(start)
                core.operations.store(operation, for: start.id)
                effects.started.append(operation)
            }
            for attempt in locked.cancels {
                if let operation = core.operations.cancel(attempt) { effects.cancels.append(operation) }
            }
            for attempt in expired(result) {
                if let operation = core.operations.cancel(attempt, isOver: true) { effects.cancels.append(operation) }
            }
            for change in locked.reprioritized {
                if let operation = core.operations.reprioritize(change.attempt) {
                    effects.reprioritized.append((operation, change.priority))
                }
            }
            if let uptime = locked.armTimer { timer.arm(at: uptime) }
            return (result, actions, effects, core.idleDrainWaiters())
        }
        for waiter in drained { waiter.resume() }
        // What the event itself was, told before what it sets off (an attempt it starts).
        announce(result)
        perform(actions, effects)
        return result
    }

    /// ``feed(ending:_:)`` for an event that returns only actions.
    func feed(ending attempt: AttemptID? = nil, _ event: (inout Machine) -> Machine.Actions) {
        feed(ending: attempt) { machine in ((), event(&machine)) }
    }


    /// Ends callers with `.cancelled`, in one pass under the lock; each call goes on while
    /// other callers want it.
    func cancel(_ handles: [RequestHandle]) {
        let now = clock.uptimeNanoseconds
        // A caller not in the machine as the lock is held is a request's operation that has not
        // sent yet (its group's, listed before it starts). Told after the lock, it ends its
        // caller unsent when it starts, or cancels it if it entered the machine meanwhile.
        var unsent: [RequestHandle] = []
        feed { machine in
            machine.cancel(handles.lazy.compactMap { handle in
                let id = handle.callerID
                if id == nil { unsent.append(handle) }
                return id
            }, now: now)
        }
        for handle in unsent { handle.operation?.cancelBeforeSending() }
    }

    /// Cancels every request sent before it that has not ended, in one pass: each ends with
    /// ``ServiceError/cancelled`` (those waiting for dependencies too), and running calls have
    /// their tasks cancelled. For a logout. Requests sent afterwards run as usual.
    public func cancelAll() {
        let now = clock.uptimeNanoseconds
        feed { machine in machine.cancel(machine.callerIDs, now: now) }
    }

    /// Cancels the requests, among those sent before it that have not ended, for which
    /// `isIncluded` returns true: by host or path (``RequestHandle/url``), method, or
    /// ``RequestHandle/tags``. `isIncluded` runs outside the scheduler's lock, on the calling
    /// thread; a call shared with a request it spares goes on for that request.
    ///
    /// ```swift
    /// scheduler.cancel { $0.url?.host == "cdn.example.com" }
    /// scheduler.cancel { $0.tags.contains("analytics") }
    /// ```
    ///
    /// - Parameter isIncluded: true for the requests to cancel; run on the calling thread, outside the
    ///   scheduler's lock.
    public func cancel(where isIncluded: (RequestHandle) -> Bool) {
        let handles = state.withLock { core in core.machine.callerHandles }
        cancel(handles.filter(isIncluded))
    }

    /// Whether the host of `url` takes new attempts: ``HostHealth/available`` unless a 429 or
    /// 503 with `Retry-After`, or failures in a row (to connect, or server errors), paused it,
    /// which ``HostHealth/paused(until:reason:)`` tells (see
    /// ``Configuration-swift.struct/hostHealth``).
    ///
    /// - Parameter url: any URL of the host.
    public func health(of url: URL) -> HostHealth {
        guard let name = url.hostKey else { return .available }
        let availability = state.withLock { core in core.machine.availability(ofHost: name) }
        return health(availability, now: clock.uptimeNanoseconds)
    }

    /// How many attempts the host of `url` may run at once now: ``hostBudget``, or
    /// ``Configuration-swift.struct/multiplexedHostBudget`` once it answered over HTTP/2 or
    /// HTTP/3, or the transport's ``HTTPTransport/maximumConnectionsPerDistantHost`` once
    /// even its quickest answer took 5 ms (unless you set the budget), or fewer while its
    /// adaptive budget is lowered (``HostHealthPolicy/adaptsBudget``).
    ///
    /// - Parameter url: any URL of the host.
    public func currentBudget(of url: URL) -> Int {
        guard let name = url.hostKey else { return hostBudget }
        return state.withLock { core in core.machine.budget(ofHost: name) ?? hostBudget }
    }

    func health(_ availability: Machine.Availability, now: UInt64) -> HostHealth {
        switch availability {
        case .available: .available
        case .paused(let until, let reason):
            .paused(until: clock.now.addingTimeInterval((Double(until) - Double(now)) / 1_000_000_000), reason: reason)
        case .probing: .probing
        }
    }

    /// Suspends or resumes callers, in one pass under the lock.
    func setSuspended(_ isSuspended: Bool, of handles: [RequestHandle]) {
        let now = clock.uptimeNanoseconds
        feed { machine in machine.setSuspended(isSuspended, of: handles.lazy.compactMap(\.callerID), now: now) }
    }

    /// Gives callers a new priority, in one pass under the lock.
    func setPriority(_ priority: RequestPriority, of handles: [RequestHandle]) {
        let now = clock.uptimeNanoseconds
        feed { machine in
            for handle in handles { handle.adopt(priority) }
            return machine.setPriority(priority, of: handles.lazy.compactMap(\.callerID), now: now)
        }
        // Outside the lock: an operation's queue takes its own locks to re-rank it.
        for handle in handles { handle.operation?.priorityChanged(to: priority) }
    }

    /// Ends a caller that is not attached to a call with `error`.
    func fail(_ handle: RequestHandle, with error: ServiceError) {
        end(handle, with: .failure(error))
    }

    /// Ends a caller that is not attached to a call with `outcome`: an error, or the cache's
    /// answer.
    func end(_ handle: RequestHandle, with outcome: Result<TransportResponse, ServiceError>) {
        // One that never entered the machine (its request could not be built, or the cache
        // answered it) has nothing to race with: nobody else can end it, and it needs no turn
        // of the lock. Its ID is set only on its own path into the machine, which is this one.
        guard let id = handle.callerID else {
            handle.complete(with: CallResult(outcome: outcome))
            return
        }
        let now = clock.uptimeNanoseconds
        feed { machine in machine.end(id, with: outcome, now: now) }
    }

    private func timerFired() {
        let now = clock.uptimeNanoseconds
        let fired = feed(expiring: { $0.expired.map(\.attempt) }, announcing: announce) { $0.timerFired(now: now) }
        for expiry in fired.expired { follow(expiry.followUp) }
        for wanted in fired.outwaited { judge(wanted) }
    }

    func nextID() -> RequestHandle.ID {
        RequestHandle.ID(value: Self.lastID.withLock { id in
            id += 1
            return id
        })
    }

    // MARK: - Events

    /// Whether any monitor listens.
    var isMonitored: Bool { !configuration.eventMonitors.isEmpty }

    /// The event that tells how `handle`'s caller ended.
    func endEvent(_ outcome: RequestHandle.Outcome, of handle: RequestHandle, metrics: ResponseMetrics) -> RequestEvent {
        switch outcome {
        case .succeeded where metrics.cacheUse.servedFromCache: .servedFromCache(handle.eventCaller, metrics)
        case .succeeded: .succeeded(handle.eventCaller, metrics)
        case .failed(let error): .failed(handle.eventCaller, error, metrics)
        case .cancelled: .cancelled(handle.eventCaller)
        }
    }

    /// The IDs of `handles`, in the order their callers were sent.
    static func ids(of handles: [RequestHandle]) -> [RequestHandle.ID] {
        handles.map(\.id).sorted { $0.value < $1.value }
    }

    /// A call as its events name it.
    static func eventCall(_ request: PreparedRequest, number: Int, callers: [RequestHandle.ID]) -> RequestEvent.Call {
        RequestEvent.Call(number: number, callers: callers, method: request.method, url: RequestEvent.loggable(request.url))
    }

    /// Tells the monitors; `event` is not even built when there are none.
    func record(_ event: @autoclosure () -> RequestEvent) {
        let monitors = configuration.eventMonitors
        guard !monitors.isEmpty else { return }
        let event = event()
        for monitor in monitors { monitor.record(event) }
    }
}
