import NetworkScheduler

/// The model controller of the compose screen: submits one post.
public final class ComposeScreenModel: Sendable {
    private let api: SocialAPI
    private let group = RequestGroup()

    public init(api: SocialAPI) {
        self.api = api
    }

    /// Submits the draft. If another screen submits the same draft at the same moment, both
    /// share one call and get the same post; the response says it was shared.
    public func submit(_ draft: PostDraft) async -> Result<Reply<Post>, ServiceError> {
        do throws(ServiceError) {
            return .success(try await api.posts.create(draft, group: group))
        } catch {
            return .failure(error)
        }
    }

    /// The user left: cancel the submit if it is still running.
    public func leave() {
        group.cancelAll()
    }
}
