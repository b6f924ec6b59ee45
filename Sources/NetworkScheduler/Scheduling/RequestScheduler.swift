import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Runs requests as operations on per-host `OperationQueue`s: by priority, within a per-host
/// budget, after their dependencies, sharing one network call between identical requests.
///
/// ```swift
/// let scheduler = RequestScheduler()
/// let api = APIClient(baseURL: URL(string: "https://api.example.com")!, scheduler: scheduler)
/// let screen = RequestGroup()
///
/// let login = scheduler.send(api.request(.login(credentials)), priority: .critical) { result in … }
/// scheduler.send(api.request(.me), priority: .high, group: screen, after: [login]) { result in … }
/// scheduler.send(api.request(.feed(page: 2)), priority: .low, group: screen) { result in … }
///
/// screen.cancelAll() // or let it go: a group cancels its requests when it is deinitialised
/// ```
///
/// Completions run on ``Configuration-swift.struct/callbackQueue``, a serial queue of the
/// scheduler's own unless you pass another; never on the main queue unless you ask for it.
public final class RequestScheduler: Sendable {
    /// How this scheduler was set up.
    public let configuration: Configuration
    /// The most network calls it runs at once to one host.
    public let maximumConcurrentRequestsPerHost: Int

    /// ``Configuration-swift.struct/headersIgnoredByDeduplication``, matched whatever their case.
    let headersIgnoredByDeduplication: HeaderNames
    let state: Locked<SchedulerState>
    /// Runs completion handlers on ``Configuration-swift.struct/callbackQueue``.
    let callbacks: CallbackQueue
    /// Shared by every scheduler, so that an ID names one caller in the whole process: a group
    /// or a monitor may see the callers of several schedulers.
    private static let lastID = Locked<UInt64>(0)

    /// A scheduler with the given configuration.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        callbacks = CallbackQueue(configuration.callbackQueue)
        headersIgnoredByDeduplication = HeaderNames(configuration.headersIgnoredByDeduplication)
        let transportLimit = max(1, configuration.transport.maximumConnectionsPerHost)
        maximumConcurrentRequestsPerHost = min(
            max(1, configuration.maximumConcurrentRequestsPerHost ?? transportLimit),
            transportLimit
        )
        let reserved = min(max(0, configuration.slotsReservedAboveLowPriority), maximumConcurrentRequestsPerHost - 1)
        state = Locked(SchedulerState(budget: maximumConcurrentRequestsPerHost,
                                      lowPriorityBudget: maximumConcurrentRequestsPerHost - reserved,
                                      defaultRetryPolicy: configuration.retryPolicy))
        if let monitor = configuration.connectivityMonitor {
            setConnected(monitor.isConnected)
            monitor.start { [weak self] isConnected in self?.setConnected(isConnected) }
        }
    }

    private func setConnected(_ isConnected: Bool) {
        start(state.withLock { $0.setConnected(isConnected, makeOperation: makeOperation) })
    }

    /// A scheduler with the default configuration, adjusted by `configure`.
    public convenience init(_ configure: (inout Configuration) -> Void) {
        var configuration = Configuration()
        configure(&configuration)
        self.init(configuration: configuration)
    }

    /// Sends a request; `completion` gets its model or error on the callback queue.
    ///
    /// - Parameters:
    ///   - priority: its place in the queue; a call shared by several callers runs at the
    ///     highest priority among them.
    ///   - group: the screen (or other scope) whose cancellation cancels this caller.
    ///   - dependencies: requests that must succeed first. If one fails or is cancelled, this
    ///     one ends with ``ServiceError/dependencyFailed(cause:dependency:)`` and is never sent.
    /// - Returns: the handle to cancel this caller, or to pass to another request's `after:`.
    @discardableResult
    public func send<Model>(
        _ request: Request<Model>,
        priority: RequestPriority = .normal,
        group: RequestGroup? = nil,
        after dependencies: [RequestHandle] = [],
        completion: @escaping @Sendable (Result<Model, ServiceError>) -> Void
    ) -> RequestHandle {
        enqueue(request, priority: priority, group: group, after: dependencies,
                callbacks: callbacks, completion: .model(completion))
    }

    /// Like ``send(_:priority:group:after:completion:)``, with the response's status, headers,
    /// timing, and whether the call was shared.
    @discardableResult
    public func sendForResponse<Model>(
        _ request: Request<Model>,
        priority: RequestPriority = .normal,
        group: RequestGroup? = nil,
        after dependencies: [RequestHandle] = [],
        completion: @escaping @Sendable (Result<Response<Model>, ServiceError>) -> Void
    ) -> RequestHandle {
        enqueue(request, priority: priority, group: group, after: dependencies,
                callbacks: callbacks, completion: .response(completion))
    }

    // MARK: - The path of one request

    /// What a caller is handed: its model, or its model with the response. One enum rather
    /// than a closure adapting one to the other, which would be an allocation per request.
    enum Completion<Model: Sendable>: Sendable {
        case model(@Sendable (Result<Model, ServiceError>) -> Void)
        case response(@Sendable (Result<Response<Model>, ServiceError>) -> Void)

        /// Reads the call's result with the caller's own request (its status codes, its model),
        /// hands the caller what it asked for, and says how the caller ended.
        func deliver(_ callResult: CallResult, readingWith request: Request<Model>) -> RequestOutcome {
            switch self {
            case .model(let completion):
                do throws(ServiceError) {
                    completion(.success(try Self.model(of: callResult, readingWith: request)))
                    return .succeeded
                } catch {
                    completion(.failure(error))
                    return RequestOutcome(error)
                }
            case .response(let completion):
                return Self.deliverResponse(callResult, readingWith: request, to: completion)
            }
        }

        /// Apart from `deliver`, whose every call would otherwise look up the generic types of
        /// this path too (`Response<Model>` and its `Result`).
        @inline(never)
        private static func deliverResponse(
            _ callResult: CallResult,
            readingWith request: Request<Model>,
            to completion: @Sendable (Result<Response<Model>, ServiceError>) -> Void
        ) -> RequestOutcome {
            do throws(ServiceError) {
                let model = try model(of: callResult, readingWith: request)
                let payload = try callResult.outcome.get()
                completion(.success(Response(value: model, httpResponse: payload.response, metrics: callResult.metrics)))
                return .succeeded
            } catch {
                completion(.failure(error))
                return RequestOutcome(error)
            }
        }

        private static func model(of callResult: CallResult, readingWith request: Request<Model>) throws(ServiceError) -> Model {
            try request.model(from: callResult.outcome.get(), idempotencyKey: callResult.idempotencyKey,
                              sharing: callResult.sharedDecodes)
        }
    }

    func enqueue<Model>(
        _ request: Request<Model>,
        priority: RequestPriority,
        group: RequestGroup?,
        after dependencies: [RequestHandle],
        callbacks: CallbackQueue?,
        completion: Completion<Model>
    ) -> RequestHandle {
        let handle = RequestHandle(
            id: nextID(),
            priority: priority,
            scheduler: self,
            submission: request.submission,
            group: group,
            callbacks: callbacks
        ) { callResult in
            completion.deliver(callResult, readingWith: request)
        }
        if dependencies.isEmpty {
            submit(handle, isNew: true)
            group?.insert(handle)
        } else {
            group?.insert(handle)
            state.withLock { $0.wait(handle, dependencies: dependencies.count) }
            for dependency in dependencies {
                dependency.whenFinished { [self, id = dependency.id] outcome in dependencyFinished(handle, id, outcome) }
            }
        }
        return handle
    }

    private func dependencyFinished(_ handle: RequestHandle, _ dependency: RequestID, _ outcome: RequestOutcome) {
        switch outcome {
        case .succeeded:
            if state.withLock({ $0.dependencySucceeded(handle) }) { submit(handle, isNew: false) }
        case .failed(let error):
            // Flat: a chain of 100,000 dependents nests no error in another.
            fail(handle, with: .dependencyFailed(cause: error.rootCause, dependency: dependency))
        case .cancelled:
            fail(handle, with: .dependencyFailed(cause: .cancelled, dependency: dependency))
        }
    }

    /// Prepares the caller's request and attaches it to a call: a new one, or the identical
    /// one in flight. `isNew` is true for a caller not yet in the state (it had no dependencies).
    private func submit(_ handle: RequestHandle, isNew: Bool) {
        let request: PreparedRequest
        do throws(ServiceError) {
            request = try handle.submission.prepare()
        } catch {
            if isNew {
                handle.complete(with: .failure(error))
            } else {
                fail(handle, with: error)
            }
            return
        }
        // Read before taking the lock, which every request and every completion takes.
        let key = request.key(handle.submission.deduplication, ignoring: headersIgnoredByDeduplication)
        let needsIdempotencyKey = handle.submission.sendsIdempotencyKey && request.header("idempotency-key") == nil
        let now = DispatchTime.now().uptimeNanoseconds
        let attachment = state.withLock { state in
            state.attach(handle, isNew: isNew, request: request, needsIdempotencyKey: needsIdempotencyKey, key: key,
                         now: now, makeOperation: makeOperation)
        }
        switch attachment {
        case .gone:
            break
        case .joined(let starts):
            record(.joined(handle.id, handle.priority, request.urlRequest))
            start(starts)
        case .created(let sent, let starts):
            record(.enqueued(handle.id, handle.priority, sent.urlRequest))
            start(starts)
        }
    }

    /// Hands operations that got a budget slot to their queues.
    func start(_ starts: SchedulerState.Starts) {
        for start in starts { start.queue.addOperation(start.operation) }
    }

    /// The operation for one attempt of a call, made under the lock when it gets a budget
    /// slot; it builds its `URLRequest` when it starts, on its own thread.
    func makeOperation(
        _ call: SchedulerState.Call,
        _ request: PreparedRequest,
        waitingSince: UInt64,
        holdsLowPrioritySlot: Bool
    ) -> DataTaskOperation {
        // Made only when a monitor listens: it would be an allocation per attempt for nothing.
        var onStart: (@Sendable (URLRequest, TimeInterval) -> Void)?
        if !configuration.eventMonitors.isEmpty {
            onStart = { [self] urlRequest, _ in
                // Since the call entered its waiting line, not since this operation was made.
                let now = DispatchTime.now().uptimeNanoseconds
                record(.started(urlRequest, queuedFor: seconds(from: waitingSince, to: now)))
            }
        }
        return DataTaskOperation(
            request: request,
            transport: configuration.transport,
            policy: call.submission.transportPolicy(maximumResponseSize: configuration.maximumResponseSize),
            onStart: onStart,
            onCompletion: { [self] outcome, timing in
                attemptEnded(call, freeingLowPrioritySlot: holdsLowPrioritySlot, with: outcome, timing: timing)
            }
        )
    }

    /// Ends callers with `.cancelled`, in one pass under the lock; each call goes on while
    /// other callers want it.
    func cancel(_ handles: [RequestHandle]) {
        let (cancelled, operations) = state.withLock { state in
            var cancelled: [RequestHandle] = []
            var operations: [DataTaskOperation] = []
            cancelled.reserveCapacity(handles.count)
            for handle in handles {
                guard let operation = state.cancel(handle) else { continue }
                cancelled.append(handle)
                if let operation { operations.append(operation) }
            }
            return (cancelled, operations)
        }
        for operation in operations { operation.cancel() }
        RequestHandle.complete(cancelled, with: .failure(.cancelled))
    }

    private func fail(_ handle: RequestHandle, with error: ServiceError) {
        guard state.withLock({ $0.removeUnattached(handle) }) else { return }
        handle.complete(with: .failure(error))
    }

    private func nextID() -> RequestID {
        RequestID(value: Self.lastID.withLock { id in
            id += 1
            return id
        })
    }

    // MARK: - Events

    func record(_ outcome: RequestOutcome, of handle: RequestHandle, metrics: ResponseMetrics) {
        switch outcome {
        case .succeeded: record(.succeeded(handle.id, handle.priority, metrics))
        case .failed(let error): record(.failed(handle.id, handle.priority, error, metrics))
        case .cancelled: record(.cancelled(handle.id, handle.priority))
        }
    }

    /// Tells the monitors; `event` is not even built when there are none.
    func record(_ event: @autoclosure () -> RequestEvent) {
        let monitors = configuration.eventMonitors
        guard !monitors.isEmpty else { return }
        let event = event()
        for monitor in monitors { monitor.record(event) }
    }
}
