extension RequestScheduler {
    /// Sends an endpoint and returns its model with the response's status, headers and timing.
    /// Cancelling the calling task cancels this caller only; escalating its priority raises
    /// the caller's (see ``AwaitingTaskLink/escalate(to:)``). Apps send through
    /// ``APIClient/reply(for:priority:group:after:progress:)``, which documents the parameters.
    func reply<Model>(
        for request: ResolvedResource<Model>,
        priority: RequestPriority = .normal,
        group: RequestGroup? = nil,
        after dependencies: [any RequestDependency] = [],
        progress: (@Sendable (TransferProgress) -> Void)? = nil
    ) async throws(ServiceError) -> Reply<Model> {
        let link = AwaitingTaskLink()
        let sent: () async -> (CallResult, RequestHandle?) = {
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<(CallResult, RequestHandle?), Never>) in
                    // A task cancelled before it asked sends nothing: cancelling a handle once it
                    // is enqueued would race with its operation starting on a queue's thread.
                    guard !link.isCancelled else {
                        // A caller to the monitors all the same, ended before it began (see
                        // `RequestEvent.Monitor`): no handle, no request made.
                        self.record(.cancelled(RequestEvent.Caller(id: self.nextID(), priority: priority,
                                                                   target: request.submission.target)))
                        continuation.resume(returning: (.failure(.cancelled), nil))
                        return
                    }
                    // Handed over unread on the thread that ends the caller: the continuation
                    // itself hops to the awaiting task, which decodes.
                    let handle = self.makeHandle(request, priority: priority, group: group, callbacks: nil,
                                                 completion: .handOver { continuation.resume(returning: ($0, $1)) })
                    if let progress { handle.onProgress(progress) }
                    // Linked before it enters the machine: an escalation that comes once the
                    // caller is heard to begin has raised it before any slot is filled again.
                    link.attach(handle)
                    self.admit(handle, after: dependencies)
                    // A cancellation between the link and the admission had nothing to cancel.
                    if link.isCancelled { handle.cancel() }
                }
            } onCancel: {
                // Runs first, and at once, when the task is already cancelled.
                link.cancel()
            }
        }
        let (callResult, handle): (CallResult, RequestHandle?)
        if #available(macOS 26.0, iOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, *) {
            (callResult, handle) = await withTaskPriorityEscalationHandler(operation: sent) { _, escalated in
                // A task of higher priority awaits this one, or the app raised it.
                link.escalate(to: escalated)
            }
        } else {
            (callResult, handle) = await sent()
        }
        // Read here, on the awaiting task; the caller ends once it is read.
        let (reply, outcome) = Completion.reply(of: callResult, readingWith: request.reading)
        handle?.finish(outcome, metrics: callResult.metrics)
        return try reply.get()
    }
}
