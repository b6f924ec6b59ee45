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
    public let text: String

    public init(text: String) {
        self.text = text
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
