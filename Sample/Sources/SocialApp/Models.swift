import Foundation
import NetworkScheduler

/// A member of the social network.
public struct User: Codable, Sendable, Equatable, Identifiable {
    public let id: Int
    public let name: String
    public let email: String?
}

/// Something a user posted.
public struct Post: Codable, Sendable, Equatable, Identifiable {
    public let id: Int
    public let authorID: Int
    public let text: String

    /// The post a live feed's `post` event carries, or nil for another event.
    public init?(event: ServerSentEvent) {
        guard event.type == "post", let post = try? JSONDecoder().decode(Post.self, from: Data(event.data.utf8)) else { return nil }
        self = post
    }
}

/// One page of the feed, newest first.
public struct FeedPage: Codable, Sendable, Equatable {
    public let page: Int
    public let posts: [Post]
    public let nextPage: Int?
}

/// What logging in returns.
public struct Session: Codable, Sendable, Equatable {
    public let token: String
    public let user: User
}

/// What logging in sends.
public struct Credentials: Encodable, Sendable {
    public let username: String
    public let password: String

    public init(username: String, password: String) {
        self.username = username
        self.password = password
    }
}

/// A post being written.
public struct PostDraft: Codable, Sendable, Equatable {
    /// Who may read a post.
    public enum Audience: String, Codable, Sendable { case everyone, friends }
    /// Where a post was written.
    public struct Place: Codable, Sendable, Equatable {
        public let name: String
        public let latitude: Double
        public let longitude: Double

        public init(name: String, latitude: Double, longitude: Double) {
            (self.name, self.latitude, self.longitude) = (name, latitude, longitude)
        }
    }

    public let text: String
    public let audience: Audience
    public let tags: [String]
    public let mentions: [User.ID]
    public let place: Place?
    public let replyTo: Post.ID?

    public init(text: String, audience: Audience = .friends, tags: [String] = [], mentions: [User.ID] = [],
                place: Place? = nil, replyTo: Post.ID? = nil) {
        (self.text, self.audience, self.tags, self.mentions, self.place, self.replyTo) = (text, audience, tags, mentions, place, replyTo)
    }
}

/// What the server read of an upload: its length and checksum.
public struct UploadReceipt: Codable, Sendable, Equatable {
    public let bytes: Int
    public let checksum: String

    public init(bytes: Int, checksum: String) {
        self.bytes = bytes
        self.checksum = checksum
    }
}

/// What the server read of a form: its fields, and its files.
public struct FormReceipt: Codable, Sendable, Equatable {
    /// One file of the form, as the server read it.
    public struct File: Codable, Sendable, Equatable {
        public let field: String
        public let filename: String?
        public let contentType: String?
        public let bytes: Int
        public let checksum: String

        public init(field: String, filename: String?, contentType: String?, bytes: Int, checksum: String) {
            self.field = field
            self.filename = filename
            self.contentType = contentType
            self.bytes = bytes
            self.checksum = checksum
        }
    }

    public let fields: [String: String]
    public let files: [File]
}
