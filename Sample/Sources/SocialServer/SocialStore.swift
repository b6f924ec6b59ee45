import Foundation

/// The social network's data, in memory. It outlives a server restart, as a database would.
actor SocialStore {
    enum CreateResult {
        case created(PostRecord)
        case duplicate
    }

    /// What the server remembers of a keyed request (`Idempotency-Key`), per user and key.
    enum KeyedRequest {
        case inProgress(payload: String)
        case completed(payload: String, status: Int, body: Data)
    }

    private var users: [Int: UserRecord] = [:]
    private var friendships: [Int: [Int]] = [:]
    private var posts: [Int: PostRecord] = [:]
    /// Each author's texts, so that a duplicate is found without a scan of every post (the
    /// benchmarks create hundreds of thousands).
    private var textsByAuthor: [Int: Set<String>] = [:]
    private var sessions: [String: Int] = [:]
    private var lastPostID = 0
    private var lastSession = 0
    private var keyedRequests: [String: KeyedRequest] = [:]
    static let password = "secret"
    static let pageSize = 5

    init() {
        let names = ["Ada", "Grace", "Linus", "Margaret", "Dennis", "Barbara", "Ken", "Frances", "Edsger", "Radia"]
        for (index, name) in names.enumerated() {
            let id = index + 1
            users[id] = UserRecord(id: id, name: name, email: "\(name.lowercased())@social.test")
            friendships[id] = (1...names.count).filter { $0 != id && ($0 + id) % 3 != 0 }
        }
        for index in 1...30 {
            lastPostID = index
            posts[index] = PostRecord(id: index, authorID: index % names.count + 1, text: "Post number \(index)")
            textsByAuthor[index % names.count + 1, default: []].insert("Post number \(index)")
        }
    }

    func login(_ body: LoginBody) -> SessionRecord? {
        guard body.password == Self.password,
              let user = users.values.first(where: { $0.name.lowercased() == body.username.lowercased() })
        else { return nil }
        lastSession += 1
        let token = "token-\(user.id)-\(lastSession)"
        sessions[token] = user.id
        return SessionRecord(token: token, user: user)
    }

    func userID(forToken token: String) -> Int? { sessions[token] }

    /// Each user's presence, as the last `PUT /me/presence` set it, and every one it was set to.
    private var presences: [Int: [String]] = [:]

    func setPresence(_ presence: String, of userID: Int) { presences[userID, default: []].append(presence) }

    func presences(of userID: Int) -> [String] { presences[userID] ?? [] }

    /// Forgets every session, as if every token had expired.
    func expireSessions() {
        sessions = [:]
    }

    /// Starts a keyed request, or returns what is known of an earlier one with the same key.
    func begin(key: String, user: Int, payload: String) -> KeyedRequest? {
        let id = "\(user)/\(key)"
        if let known = keyedRequests[id] { return known }
        keyedRequests[id] = .inProgress(payload: payload)
        return nil
    }

    /// Stores a keyed request's response, to replay it to retries of the same request.
    func finish(key: String, user: Int, payload: String, status: Int, body: Data) {
        keyedRequests["\(user)/\(key)"] = .completed(payload: payload, status: status, body: body)
    }
    func user(_ id: Int) -> UserRecord? { users[id] }
    func friends(of id: Int) -> [UserRecord]? {
        friendships[id].map { $0.compactMap { users[$0] } }
    }

    func feed(page: Int) -> FeedPageRecord {
        let newestFirst = posts.values.sorted { $0.id > $1.id }
        let start = max(0, (page - 1) * Self.pageSize)
        let slice = Array(newestFirst.dropFirst(start).prefix(Self.pageSize))
        let hasMore = start + Self.pageSize < newestFirst.count
        return FeedPageRecord(page: page, posts: slice, nextPage: hasMore ? page + 1 : nil)
    }

    /// Creating the same post twice fails, as a real API would: the bug deduplication prevents.
    func createPost(by author: Int, text: String) -> CreateResult {
        guard textsByAuthor[author, default: []].insert(text).inserted else { return .duplicate }
        lastPostID += 1
        let post = PostRecord(id: lastPostID, authorID: author, text: text)
        posts[post.id] = post
        return .created(post)
    }

    func post(_ id: Int) -> PostRecord? { posts[id] }

    /// The posts newer than `id`, oldest first.
    func posts(after id: Int) -> [PostRecord] {
        guard lastPostID > id else { return [] }
        return ((id + 1)...lastPostID).compactMap { posts[$0] }
    }

    func posts(withTextPrefix prefix: String) -> [(id: Int, text: String)] {
        posts.values.filter { $0.text.hasPrefix(prefix) }.sorted { $0.id < $1.id }.map { ($0.id, $0.text) }
    }

    func postCount(withTextPrefix prefix: String) -> Int {
        posts.values.count { $0.text.hasPrefix(prefix) }
    }

    func deletePost(_ id: Int, by author: Int) -> Bool? {
        guard let post = posts[id] else { return nil }
        guard post.authorID == author else { return false }
        posts[id] = nil
        textsByAuthor[author]?.remove(post.text)
        return true
    }
}
