import Foundation

/// The server's own view of its data, as JSON goes out. The app has its own models.
struct UserRecord: Codable, Sendable {
    let id: Int
    let name: String
    let email: String?
}

struct PostRecord: Codable, Sendable {
    let id: Int
    let authorID: Int
    let text: String
}

struct FeedPageRecord: Codable, Sendable {
    let page: Int
    let posts: [PostRecord]
    let nextPage: Int?
}

struct SessionRecord: Codable, Sendable {
    let token: String
    let user: UserRecord
}

struct LoginBody: Codable, Sendable {
    let username: String
    let password: String
}

struct PostBody: Codable, Sendable {
    let text: String
}

struct MessageBody: Codable, Sendable {
    let message: String
}

/// A user's presence (`away`, `online`…), as `PUT /me/presence` takes and answers it.
struct PresenceRecord: Codable, Sendable {
    let presence: String
}
