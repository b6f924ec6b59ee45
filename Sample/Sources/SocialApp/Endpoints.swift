import Foundation
import NetworkScheduler
import NetworkSchedulerOutbox

// The API's endpoints, one typed resource each. New endpoints are added here, not edited in.

extension Resource where Model == Session {
    /// `POST /login`: a bearer token for the user.
    public static func login(_ credentials: Credentials) -> Self {
        Resource(.post, path: "login", body: .json(credentials))
    }
}

extension Resource where Model == User {
    /// `GET /me`: the logged-in user.
    public static var me: Self { Resource(path: "me") }

    /// `GET /users/{id}`.
    public static func user(_ id: User.ID) -> Self { Resource(path: "users/\(id)") }
}

extension Resource where Model == [User] {
    /// `GET /users/{id}/friends`.
    public static func friends(of id: User.ID) -> Self { Resource(path: "users/\(id)/friends") }
}

extension Resource where Model == FeedPage {
    /// `GET /feed?page=N`.
    public static func feed(page: Int) -> Self {
        Resource(path: "feed", query: [URLQueryItem(name: "page", value: String(page))])
    }
}

extension Resource where Model == Post {
    /// `POST /posts`: creating the same post twice is a 409 "already exists" at the server,
    /// which is why identical submits in flight must share one call.
    public static func create(_ draft: PostDraft) -> Self {
        Resource(.post, path: "posts", body: .json(draft))
    }

    /// `GET /posts/{id}`.
    public static func post(_ id: Post.ID) -> Self { Resource(path: "posts/\(id)") }
}

extension Resource where Model == Void {
    /// `DELETE /posts/{id}`.
    public static func delete(post id: Post.ID) -> Self { Resource(.delete, path: "posts/\(id)") }
}

extension Resource where Model == UploadReceipt {
    /// `POST /uploads`: a file, streamed from disk.
    public static func upload(_ file: URL, contentType: String = "application/octet-stream") -> Self {
        Resource(.post, path: "uploads", body: .file(file, contentType: contentType))
    }
}

extension Resource where Model == FormReceipt {
    /// `POST /me/avatar`: a `multipart/form-data` form with the picture.
    public static func avatar(_ form: MultipartForm) -> Self {
        Resource(.post, path: "me/avatar", body: .multipart(form))
    }
}

extension Resource where Model == URL {
    /// `GET /exports/{name}?bytes=N`: a large file, saved to `destination`, resumed if cut short.
    public static func export(_ name: String, bytes: Int, to destination: URL) -> Self {
        .download("exports/\(name)", query: [URLQueryItem(name: "bytes", value: String(bytes))], to: destination,
                  maximumSize: bytes)
    }
}

extension StreamResource where Element == ServerSentEvent {
    /// `GET /feed/live`: new posts as server-sent events, from the one after `after` (or the
    /// last event ID a reconnection sends) on; `limit` ends the stream after that many.
    public static func liveFeed(after: Post.ID? = nil, limit: Int? = nil) -> Self {
        var query: [URLQueryItem] = []
        if let after { query.append(URLQueryItem(name: "after", value: String(after))) }
        if let limit { query.append(URLQueryItem(name: "limit", value: String(limit))) }
        return .events("feed/live", query: query, reconnectionDelay: 0.1)
    }
}

extension OutboxKind where Payload == PostDraft {
    /// A new post, kept in the app's outbox until the server has it: one at a time, in order.
    public static let newPost = OutboxKind("new post", lane: "posts") { draft in Resource<Post>.create(draft) }
}
