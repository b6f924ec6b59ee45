/// The models the benchmarks decode: what the SocialServer sends for a user and their friends.
struct User: Decodable, Sendable {
    let id: Int
    let name: String
    let email: String?
}

struct Session: Decodable, Sendable {
    let token: String
}

struct Post: Decodable, Sendable {
    let id: Int
    let text: String
}

struct PostDraft: Encodable, Sendable {
    let text: String
}
