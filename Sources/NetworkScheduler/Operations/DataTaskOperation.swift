import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One attempt on the wire: an asynchronous operation wrapping one transport task.
///
/// It reports how its task ended, then finishes: the response, the transport error, or
/// `.cancelled`. Cancelled before it starts, it never touches the network. It decides nothing:
/// its scheduler's machine owns the attempt's deadline (and has the operation cancelled then),
/// and takes the first report of each attempt as its end, so a transport that calls back twice
/// changes no caller's outcome.
final class DataTaskOperation: AsyncOperation, @unchecked Sendable {
    // Safety: the mutable state, `task`, `adaptation` and `priority`, is read and written only
    // inside `withStateLock`.

    /// What the operation reports when it is done. It measures no time: every duration the
    /// scheduler reports is on the scheduler's clock.
    typealias Completion = @Sendable (Result<TransportResponse, ServiceError>) -> Void

    private enum TaskState {
        case idle
        /// Its task is being started, and may report before it is stored.
        case starting
        case running(any TransportTask)
        /// Cancelled before its task was stored: the task is cancelled as soon as it is.
        case cancelled
        case completed

        /// Moves an idle operation to starting; a cancelled one keeps its cancellation.
        var starting: TaskState {
            if case .idle = self { .starting } else { self }
        }
    }

    /// The call's request, as the scheduler keeps it: what goes on the wire, and where its
    /// answer goes (a download's file, a stream).
    private let scheduled: ScheduledRequest
    private let transport: any HTTPTransport
    /// The scheduler's clock: the one time the operation reads.
    private let clock: any SchedulerClock
    private let policy: TransportPolicy
    /// Whether the request tells its server its priority as the attempt starts, in RFC 9218's
    /// `Priority` header (``RequestScheduler/Configuration-swift.struct/sendsPriorityHeader``).
    private let sendsPriorityHeader: Bool
    /// The adapter at work, cancelled with the operation.
    private var adaptation: Task<Void, Never>?
    private let onStart: (@Sendable () -> Void)?
    /// Told how much of the body has gone out, a step at a time (see ``ProgressSteps``).
    private let onProgress: (@Sendable (TransferProgress) -> Void)?
    /// Told of its answer's head as it arrives, by a transport that hands heads to a sink.
    private let onHead: (@Sendable (ResponseHead) -> Void)?
    private let onCompletion: Completion
    /// The progress last passed on.
    private var progressSteps = ProgressSteps()
    /// The body this attempt sends from disk, once staged; its temporary file is removed when
    /// the attempt ends.
    private var stagedBody: RequestBody.Staged?
    private var download: FileDownload?
    /// This attempt's connection to its stream, and the bytes it brought.
    private var streamSink: (any StreamSinking)?
    private var streamed: Int64 = 0
    private var task = TaskState.idle
    /// The priority its task is to have: the policy's, until its callers change theirs.
    private var priority: RequestPriority

    /// An operation that sends `request` through `transport` when a queue starts it.
    ///
    /// - Parameters:
    ///   - request: the request to send, with what changes it as the attempt starts (its
    ///     adapter) and where its body goes (a download's file, a stream), if anywhere.
    ///   - transport: what sends it.
    ///   - policy: the redirects to follow, the response size limit and the priority.
    ///   - sendsPriorityHeader: whether the request says its priority as it starts, in a
    ///     `Priority` header, unless it has one of its own.
    ///   - clock: the scheduler's, which paces a stream's steps.
    ///   - onStart: called on the starting thread just before the task is started.
    ///   - onProgress: told how much of the body has gone out, or come in, in steps, before
    ///     `onCompletion`.
    ///   - onHead: told of the answer's head as it arrives, before its body, by a transport
    ///     that hands heads to a ``ResponseBodySink``; nil when nobody asked.
    ///   - onCompletion: called with the outcome, before the operation finishes (again if its
    ///     transport calls back again).
    init(
        request: ScheduledRequest,
        transport: any HTTPTransport,
        policy: TransportPolicy = TransportPolicy(),
        sendsPriorityHeader: Bool = false,
        clock: any SchedulerClock = .system,
        onStart: (@Sendable () -> Void)?,
        onProgress: (@Sendable (TransferProgress) -> Void)? = nil,
        onHead: (@Sendable (ResponseHead) -> Void)? = nil,
        onCompletion: @escaping Completion
    ) {
        scheduled = request
        self.transport = transport
        self.policy = policy
        self.sendsPriorityHeader = sendsPriorityHeader
        self.clock = clock
        priority = policy.priority
        self.onStart = onStart
        self.onProgress = onProgress
        self.onHead = onHead
        self.onCompletion = onCompletion
        super.init()
    }

    /// Handed to the transport as it is when the operation starts.
    private var prepared: PreparedRequest { scheduled.prepared }
    /// Changes the request as the attempt starts, if anything does.
    private var adapter: RequestAdapter? { scheduled.submission.adapter }
    /// Where a download's body goes, if it is one: its file for this attempt.
    private var downloadDestination: URL? { scheduled.submission.downloadDestination }
    /// The most bytes a download writes to its file: the app's limit, or none (a body written
    /// to disk has no limit by default). A body the download declines, an error's, is read
    /// into memory under the policy's limit.
    private var downloadLimit: Int { scheduled.submission.maximumResponseSize ?? .max }
    /// Where a stream's body goes, if it is one.
    private var stream: (any StreamIntake)? { scheduled.submission.stream }

    override func execute() {
        guard !isCancelled else {
            complete(.failure(.cancelled))
            return
        }
        // The request as the scheduler built it, handed to the transport as it is; a download
        // or a stream adds its own headers, and its call's priority as it starts may add one.
        var request = prepared
        do throws(ServiceError) {
            let staged = try prepared.stagedBody()
            withStateLock { stagedBody = staged }
            if let downloadDestination {
                // Weakly: the operation keeps its download until it completes.
                let download = try FileDownload(destination: downloadDestination, limit: downloadLimit, onHead: onHead) { [weak self] in
                    self?.progressed($0)
                }
                for (name, value) in download.resumeHeaders() { request.setValue(value, forHTTPHeaderField: name) }
                withStateLock { self.download = download }
            }
            if let stream {
                // Weakly, as a download: the operation keeps its sink until it completes.
                let sink = stream.makeSink(onHead: onHead) { [weak self] bytes in self?.streamed(bytes) }
                for (name, value) in sink.headers { request.setValue(value, forHTTPHeaderField: name) }
                withStateLock { streamSink = sink }
            }
            if sendsPriorityHeader, request.header("Priority") == nil,
               let value = withStateLock({ priority }).priorityHeader(isIncremental: downloadDestination != nil || stream != nil) {
                request.setValue(value, forHTTPHeaderField: "Priority")
            }
        } catch {
            complete(.failure(error))
            return
        }
        onStart?()
        withStateLock { task = task.starting }
        guard let adapter else {
            send(request)
            return
        }
        let adaptation = Task { [self] in
            do throws(ServiceError) {
                // An adapter changes a `URLRequest`: the one request of this attempt built as one.
                let adapted = try await adapter.adapted(request.urlRequest,
                                                        for: request.adaptation?.identity ?? adapter.statedIdentity())
                // Cancelled while it adapted: the request is not sent.
                let isStarting = withStateLock { if case .starting = task { true } else { false } }
                guard isStarting else { return complete(.failure(.cancelled)) }
                send(PreparedRequest(adapted))
            } catch {
                complete(.failure(error))
            }
        }
        let cancelledMeanwhile = withStateLock { () -> Bool in
            self.adaptation = adaptation
            if case .starting = task { return false }
            return true
        }
        if cancelledMeanwhile { adaptation.cancel() }
    }

    /// Starts the transport's task for `request`, with the body staged for it, if any.
    private func send(_ request: PreparedRequest) {
        let (file, sink) = withStateLock { () -> (TransportRequest.BodyFile?, (any ResponseBodySink)?) in
            (stagedBody?.file, download ?? streamSink ?? onHead.map(HeadWatch.init))
        }
        var transportRequest = TransportRequest(request, bodyFile: file)
        transportRequest.responseSink = sink
        let progress: (@Sendable (TransferProgress) -> Void)? = onProgress == nil ? nil : { @Sendable [self] in progressed($0) }
        // Capturing only `self` makes the closure without an allocation of its own.
        let newTask = transport.startTask(for: transportRequest, policy: policy, progress: progress) { [self] result in
            complete(checked(result))
        }
        let cancelledMeanwhile = withStateLock { () -> Bool in
            switch task {
            case .starting:
                task = .running(newTask)
                // Changed while the task was being made; told under the lock, so that a later
                // change cannot be overtaken by this one.
                if priority != policy.priority { newTask.reprioritize(to: priority) }
                return false
            case .cancelled:
                return true
            case .idle, .running, .completed:
                return false
            }
        }
        if cancelledMeanwhile { newTask.cancel() }
    }

    /// Passes on a step of the body's progress, unless the attempt has ended.
    private func progressed(_ progress: TransferProgress) {
        let isStep = withStateLock { () -> Bool in
            if case .completed = task { return false }
            return progressSteps.isStep(progress)
        }
        if isStep { onProgress?(progress) }
    }

    /// Passes on a stream's progress (bytes that arrived, or 0 when its reader took some while
    /// the transport waited): each step moves the attempt's deadline.
    private func streamed(_ bytes: Int) {
        let now = clock.uptimeNanoseconds
        let total = withStateLock { () -> Int64? in
            if case .completed = task { return nil }
            streamed += Int64(bytes)
            return progressSteps.isStreamStep(streamed, at: now) ? streamed : nil
        }
        if let total { onProgress?(.received(total, of: nil)) }
    }

    /// Tells its task how urgent its request now is, or the task it is about to make.
    func reprioritize(to newPriority: RequestPriority) {
        withStateLock {
            priority = newPriority
            if case .running(let task) = task { task.reprioritize(to: newPriority) }
        }
    }

    override func skipExecution() {
        complete(.failure(.cancelled))
    }

    /// Cancels the operation: its task if it runs (the outcome is then `.cancelled`), or the
    /// task before it is made, which then never touches the network.
    override func cancel() {
        super.cancel()
        let running: (any TransportTask)? = withStateLock {
            switch task {
            case .running(let transportTask):
                return transportTask
            case .idle:
                task = .cancelled
                return nil
            case .starting:
                task = .cancelled
                adaptation?.cancel()
                return nil
            case .cancelled, .completed:
                return nil
            }
        }
        running?.cancel()
    }

    /// Whether `payload`'s status is one its resource accepts: the one rule for success, by
    /// which the machine reads the attempt too. Only such an answer's body is a download's file
    /// or a stream's.
    private func isAccepted(_ payload: TransportResponse) -> Bool {
        scheduled.submission.acceptableStatusCodes.contains(payload.statusCode)
    }

    /// The transport's result as the caller sees it, with the size limit enforced even by a
    /// transport that does not, and a download's file in its place, or kept for a resume.
    private func checked(_ result: Result<TransportResponse, any Error>) -> Result<TransportResponse, ServiceError> {
        let (download, streamSink) = withStateLock { (self.download, self.streamSink) }
        if case .success(let payload) = result, let streamSink, isAccepted(payload) {
            do {
                try Self.sinkBody(of: payload, into: streamSink, isAccepted: streamSink.isAccepted)
            } catch {
                return .failure(ServiceError(error))
            }
            streamSink.endOfBody()
            return .success(TransportResponse(data: Data(), head: payload.head))
        }
        if case .success(let payload) = result, let download {
            do throws(ServiceError) {
                return .success(try saved(payload, by: download))
            } catch {
                download.abandon()
                return .failure(error)
            }
        }
        switch result {
        case .success(let payload) where payload.data.count > policy.maximumResponseSize:
            return .failure(.responseTooLarge(limit: policy.maximumResponseSize))
        case .success(let payload):
            return .success(payload)
        case .failure(let error):
            download?.abandon()
            return .failure(prepared.bodyFileChange ?? ServiceError(error))
        }
    }

    /// A download's answer: its body saved to its destination if it is a success; an error's
    /// body (in memory) as it is. The body comes in the response's data from a transport that
    /// does not take a ``ResponseBodySink``.
    private func saved(_ payload: TransportResponse, by download: FileDownload) throws(ServiceError) -> TransportResponse {
        guard isAccepted(payload) else {
            download.abandon()
            guard payload.data.count <= policy.maximumResponseSize else { throw .responseTooLarge(limit: policy.maximumResponseSize) }
            return payload
        }
        do {
            try Self.sinkBody(of: payload, into: download, isAccepted: download.isAccepted)
        } catch {
            throw ServiceError(error)
        }
        try download.finish()
        return TransportResponse(data: Data(), head: payload.head)
    }

    /// Hands a body to `sink` that a transport which takes no sink kept in memory.
    private static func sinkBody(of payload: TransportResponse, into sink: any ResponseBodySink, isAccepted: Bool) throws {
        if !isAccepted, try sink.accept(payload.head) { try sink.write(payload.data) }
    }

    /// Reports `result` and finishes. A second report (a transport that calls back twice) is
    /// passed on too: the machine takes each attempt's first, and a second `finish()` is
    /// harmless.
    private func complete(_ result: Result<TransportResponse, ServiceError>) {
        let (staged, download) = withStateLock { () -> (URL?, FileDownload?) in
            defer {
                task = .completed
                stagedBody = nil
                self.download = nil
                streamSink = nil
            }
            return (stagedBody?.temporaryFile, self.download)
        }
        if let staged { try? FileManager.default.removeItem(at: staged) }
        // Settled already, unless the attempt ended before its answer (cancelled, unsent).
        download?.abandon()
        onCompletion(result)
        finish()
    }
}

/// Which of a transfer's progress reports to pass on: one for each hundredth of it (and at
/// least 64 KiB), and the last, so that a caller is told about a hundred times whatever the
/// size, and the scheduler's lock is not taken for every few kilobytes. A stream, whose size is
/// not known, passes one per 64 KiB or per tenth of a second, whichever comes first: its
/// deadline is on stalling, so even a trickle must move it.
struct ProgressSteps {
    /// The bytes gone (out and in) at the last report passed on, or nil before the first.
    private var lastPassed: Int64?
    /// Uptime of the last stream step passed on.
    private var lastPassedAt: UInt64 = 0

    /// Whether a stream that has brought `total` bytes at uptime `now` has made a step.
    mutating func isStreamStep(_ total: Int64, at now: UInt64) -> Bool {
        guard lastPassed == nil || total - (lastPassed ?? 0) >= 64 * 1_024 || now &- lastPassedAt >= 100_000_000 else {
            return false
        }
        lastPassed = total
        lastPassedAt = now
        return true
    }

    /// Whether `progress` is a step from the last one passed on; if so, it becomes the last.
    mutating func isStep(_ progress: TransferProgress) -> Bool {
        let done = progress.bytesSent + progress.bytesReceived
        let whole = (progress.bytesExpectedToSend ?? 0) + (progress.bytesExpectedToReceive ?? 0)
        let step = max(64 * 1_024, whole / 100)
        let last = lastPassed ?? -1
        guard done > last, progress.isComplete || done - max(last, 0) >= step else { return false }
        lastPassed = done
        return true
    }
}
