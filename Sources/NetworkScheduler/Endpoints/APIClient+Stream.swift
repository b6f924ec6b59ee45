extension APIClient {
    /// Sends a stream resource of this client and returns its answer as it arrives: chunks,
    /// lines or server-sent events. The request is sent at once; its elements wait in the
    /// stream's buffer until they are read. See <doc:Streams>.
    ///
    /// ```swift
    /// let feed = api.stream(.events("feed/live"), priority: .high, group: screen)
    /// for try await event in feed { show(event) }
    /// ```
    ///
    /// - Parameters:
    ///   - resource: the stream resource.
    ///   - priority: its place in its host's line for streams.
    ///   - group: the screen (or other scope) whose cancellation ends the stream.
    ///   - dependencies: requests that must succeed first; if one fails or is cancelled, the
    ///     stream ends with ``ServiceError/dependencyFailed(cause:dependency:)`` and is never sent.
    /// - Returns: the stream, to read once; releasing it unread cancels it.
    public func stream<Element>(
        _ resource: StreamResource<Element>,
        priority: RequestPriority = .normal,
        group: RequestGroup? = nil,
        after dependencies: [any RequestDependency] = []
    ) -> ResponseStream<Element> {
        let channel = StreamChannel(decoder: resource.makeDecoder(), limit: resource.bufferSize,
                                    reconnection: resource.reconnection)
        let handle = scheduler.enqueue(resolve(resource.request, stream: channel), priority: priority, group: group,
                                       after: dependencies, callbacks: nil, progress: nil,
                                       // Delivered inline: ending the stream runs no code of the app's.
                                       completion: .model { [channel] result in channel.finish(result) })
        return ResponseStream(handle: handle, channel: channel)
    }
}
