/// The API's routes, as tests and `/_stats` name them.
public enum Route: String, CaseIterable, Codable, Sendable {
    case login = "POST /login"
    case me = "GET /me"
    case user = "GET /users/{id}"
    case friends = "GET /users/{id}/friends"
    case feed = "GET /feed"
    case createPost = "POST /posts"
    case post = "GET /posts/{id}"
    case deletePost = "DELETE /posts/{id}"
    /// Answers, without a token, with the headers it received: where a redirect's went.
    case echo = "GET /echo"
    /// Answers, without a token, with the body it received, as it received it.
    case echoBody = "POST /echo"
    /// Sets the user's presence (`{"presence": "away"}`): the last write is the state.
    case presence = "PUT /me/presence"
    /// Reads the body as it streams in and answers with its length and checksum.
    case upload = "POST /uploads"
    /// Reads a `multipart/form-data` form and answers with its fields and files.
    case avatar = "POST /me/avatar"
    /// A large body (`?bytes=N`), with an `ETag`, `Range` and `If-Range`.
    case export = "GET /exports/{name}"
    /// New posts as server-sent events, from a `Last-Event-ID` on.
    case liveFeed = "GET /feed/live"
}
