import Foundation
import NetworkScheduler

/// How the scheduler runs the calls a generated client makes in a scope: their priority,
/// group, dependencies, deadline and use of the cache. Set them for a block of code with
/// ``withScheduling(priority:group:after:within:cachePolicy:deduplication:tags:streamsResponse:isolation:operation:)``,
/// which reads like the call it wraps:
///
/// ```swift
/// let feed = try await withScheduling(priority: .high, group: screen) {
///     try await client.getFeed(query: .init(page: 1)).ok.body.json
/// }
/// ```
///
/// A scope inside another keeps what it does not set; what no scope sets comes from the
/// transport's defaults for the operation (``SchedulerClientTransport/init(client:bufferedUploadLimit:defaults:)``).
public struct SchedulingOptions: Sendable {
    /// Its place in its host's line.
    public var priority: RequestPriority
    /// The scope (a screen) whose cancellation cancels it.
    public var group: RequestGroup?
    /// Requests that must succeed before it is sent.
    public var dependencies: [RequestHandle]
    /// The most seconds it may take from its send to its answer, retries included; nil for
    /// no deadline.
    public var deadline: TimeInterval?
    /// How it uses the scheduler's cache, when there is one.
    public var cachePolicy: CachePolicy
    /// Whether identical calls in flight share one network call.
    public var deduplication: Deduplication
    /// Tags, which `RequestScheduler.cancel(where:)` can read (`$0.tags`). Each call is also
    /// tagged `openapi:` and its operation's ID.
    public var tags: Set<String>
    /// Whether the answer's body reaches the generated client as it arrives (neither shared
    /// with identical calls nor cached) or once it is whole; nil decides by the request's
    /// `Accept`: streamed for `application/octet-stream`, `text/event-stream` and JSON lines.
    public var streamsResponse: Bool?

    /// Options with the library's defaults: normal priority, no group, no dependency, no
    /// deadline, the cache's rules, deduplication.
    public init(
        priority: RequestPriority = .normal,
        group: RequestGroup? = nil,
        dependencies: [RequestHandle] = [],
        deadline: TimeInterval? = nil,
        cachePolicy: CachePolicy = .useCache,
        deduplication: Deduplication = .automatic,
        tags: Set<String> = [],
        streamsResponse: Bool? = nil
    ) {
        self.priority = priority
        self.group = group
        self.dependencies = dependencies
        self.deadline = deadline
        self.cachePolicy = cachePolicy
        self.deduplication = deduplication
        self.tags = tags
        self.streamsResponse = streamsResponse
    }

    /// These options, with what `scope` sets in their place.
    func overridden(by scope: SchedulingScope?) -> SchedulingOptions {
        guard let scope else { return self }
        var options = self
        if let priority = scope.priority { options.priority = priority }
        if let group = scope.group { options.group = group }
        options.dependencies += scope.dependencies
        if let deadline = scope.deadline { options.deadline = deadline }
        if let cachePolicy = scope.cachePolicy { options.cachePolicy = cachePolicy }
        if let deduplication = scope.deduplication { options.deduplication = deduplication }
        options.tags.formUnion(scope.tags)
        if let streamsResponse = scope.streamsResponse { options.streamsResponse = streamsResponse }
        return options
    }
}

/// What the scopes around a task set, innermost last: nil for what none of them set.
struct SchedulingScope: Sendable {
    var priority: RequestPriority?
    var group: RequestGroup?
    var dependencies: [RequestHandle] = []
    var deadline: TimeInterval?
    var cachePolicy: CachePolicy?
    var deduplication: Deduplication?
    var tags: Set<String> = []
    var streamsResponse: Bool?

    @TaskLocal static var current: SchedulingScope?
}

/// Runs `operation` with the calls its generated clients make (through a
/// ``SchedulerClientTransport``) scheduled so. What it does not set is kept from the scope
/// around it, or else from the transport's defaults for the operation.
///
/// ```swift
/// let login = auth.send(.login(credentials)) { _ in }
/// let me = try await withScheduling(priority: .critical, after: [login], within: 10) {
///     try await client.getMe().ok.body.json
/// }
/// ```
///
/// - Parameters:
///   - priority: their place in their host's line.
///   - group: the scope whose cancellation cancels them.
///   - dependencies: requests that must succeed before they are sent, besides those of the
///     scopes around it.
///   - deadline: the most seconds each may take, retries included.
///   - cachePolicy: how they use the scheduler's cache.
///   - deduplication: whether identical calls in flight share one network call.
///   - tags: tags added to theirs.
///   - streamsResponse: whether their answers reach the client as they arrive.
///   - isolation: the actor `operation` runs on: the caller's.
///   - operation: the code whose calls are scheduled so.
/// - Returns: what `operation` returns.
public func withScheduling<Result>(
    priority: RequestPriority? = nil,
    group: RequestGroup? = nil,
    after dependencies: [RequestHandle] = [],
    within deadline: TimeInterval? = nil,
    cachePolicy: CachePolicy? = nil,
    deduplication: Deduplication? = nil,
    tags: Set<String> = [],
    streamsResponse: Bool? = nil,
    isolation: isolated (any Actor)? = #isolation,
    operation: () async throws -> Result
) async rethrows -> Result {
    var scope = SchedulingScope.current ?? SchedulingScope()
    scope.priority = priority ?? scope.priority
    scope.group = group ?? scope.group
    scope.dependencies += dependencies
    scope.deadline = deadline ?? scope.deadline
    scope.cachePolicy = cachePolicy ?? scope.cachePolicy
    scope.deduplication = deduplication ?? scope.deduplication
    scope.tags.formUnion(tags)
    scope.streamsResponse = streamsResponse ?? scope.streamsResponse
    return try await SchedulingScope.$current.withValue(scope, operation: operation, isolation: isolation)
}
