/// The requests of one screen (or any scope), cancelled or re-ranked together.
///
/// Keep one per screen and pass it to every request the screen makes. When the user leaves,
/// call ``cancelAll()``, or just release the group: it cancels what is left when it is
/// deinitialised. Only this group's callers are cancelled; a call shared with another screen
/// goes on for that screen.
///
/// ```swift
/// final class FriendsScreenModel {
///     private let group = RequestGroup()
///     func load() {
///         friendsService.loadFriends(of: user, group: group) { … }
///     }
/// }
/// ```
public final class RequestGroup: Sendable {
    private let members = Locked<[RequestHandle.ID: RequestHandle]>([:])

    /// An empty group.
    public init() {}

    deinit {
        cancelAll()
    }

    /// How many of the group's requests have not ended yet.
    public var count: Int { members.withLock { $0.count } }

    /// Cancels every request of the group that has not ended, in time proportional to their
    /// number. Requests sent to the group afterwards run as usual.
    public func cancelAll() {
        let handles = members.withLock { members in
            defer { members = [:] }
            return Array(members.values)
        }
        Self.bySchedulers(handles) { scheduler, handles in scheduler.cancel(handles) }
    }

    /// Gives every request of the group that has not ended `priority`, as if each handle's
    /// ``RequestHandle/priority`` were set, in one pass per scheduler: lower a hidden screen's
    /// requests, raise them again when it shows. Requests sent to the group afterwards keep
    /// the priority they are sent with.
    ///
    /// ```swift
    /// override func viewWillDisappear(_ animated: Bool) { group.setPriority(.low) }
    /// override func viewWillAppear(_ animated: Bool) { group.setPriority(.high) }
    /// ```
    public func setPriority(_ priority: RequestPriority) {
        let handles = members.withLock { Array($0.values) }
        Self.bySchedulers(handles) { scheduler, handles in scheduler.setPriority(priority, of: handles) }
    }

    /// Hands `body` each scheduler's handles: a group may hold requests of several.
    private static func bySchedulers(_ handles: [RequestHandle], _ body: (RequestScheduler, [RequestHandle]) -> Void) {
        guard let scheduler = handles.first?.scheduler else { return }
        if handles.allSatisfy({ $0.scheduler === scheduler }) {
            body(scheduler, handles)
            return
        }
        for handles in Dictionary(grouping: handles, by: { ObjectIdentifier($0.scheduler) }).values {
            body(handles[0].scheduler, handles)
        }
    }

    /// Lists a caller until it ends (its handle calls ``remove(_:)``).
    func insert(_ handle: RequestHandle) {
        members.withLock { $0[handle.id] = handle }
        // It may have ended before it was listed; it marks itself finished before it leaves.
        if handle.isFinished { remove(handle.id) }
    }

    func remove(_ id: RequestHandle.ID) {
        members.withLock { _ = $0.removeValue(forKey: id) }
    }
}
