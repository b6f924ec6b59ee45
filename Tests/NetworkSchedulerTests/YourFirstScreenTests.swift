// The code of the DocC article "Your First Screen", as written there: the model controller,
// then its tests. `theArticleShowsThisFilesCodeAsWritten` fails when the two differ.

import Foundation
import NetworkScheduler

struct Person: Codable, Sendable, Equatable {
    let id: Int
    let name: String
}

extension Resource where Model == Person {
    static var me: Self { Resource(path: "me") }
}

extension Resource where Model == [Person] {
    static func friends(of id: Int, limit: Int = 50) -> Self {
        Resource(path: "people/\(id)/friends", query: [URLQueryItem(name: "limit", value: String(limit))])
    }
}

@MainActor final class FriendsScreen {
    private(set) var me: Person?
    private(set) var friends: [Person] = []
    private(set) var error: ServiceError?
    /// Every request of the screen: cancelled when it goes, awaited by a pull-to-refresh.
    let group = RequestGroup()
    private let api: APIClient

    init(api: APIClient) {
        self.api = api
    }

    /// Who I am first (visible at once), then my friends.
    func load() async {
        do throws(ServiceError) {
            let me = try await api.value(for: .me, priority: .high, group: group)
            self.me = me
            friends = try await api.value(for: .friends(of: me.id), priority: .high, group: group)
        } catch {
            self.error = error
        }
    }

    func leave() {
        group.cancelAll()
    }
}

import Foundation
import NetworkScheduler
import NetworkSchedulerTesting
import Testing

@MainActor @Test func theScreenShowsMeThenMyFriends() async {
    let transport = StubTransport(script: [
        "GET /v1/me": [.json(Person(id: 1, name: "Ada"))],
        "GET /v1/people/1/friends": [.json([Person(id: 2, name: "Grace"), Person(id: 3, name: "Alan")])],
    ])
    let api = APIClient(baseURL: URL(string: "https://api.example.com/v1")!,
                        scheduler: RequestScheduler { $0.transport = transport })
    let screen = FriendsScreen(api: api)

    await screen.load()

    #expect(screen.me?.name == "Ada")
    #expect(screen.friends.map(\.name) == ["Grace", "Alan"])
    #expect(screen.error == nil)
    #expect(transport.arrivals.elements.map(\.route) == ["GET /v1/me", "GET /v1/people/1/friends"])
}

@MainActor @Test func leavingTheScreenCancelsWhatItStillWaitsFor() async {
    let transport = StubTransport(script: [
        "GET /v1/me": [.json(Person(id: 1, name: "Ada"))],
        "GET /v1/people/1/friends": [.hold],   // held until the test releases it, or cancels
    ])
    let api = APIClient(baseURL: URL(string: "https://api.example.com/v1")!,
                        scheduler: RequestScheduler { $0.transport = transport })
    let screen = FriendsScreen(api: api)
    let loading = Task { await screen.load() }
    await transport.arrivals.wait(for: 2)

    screen.leave()
    await loading.value

    #expect(screen.me?.name == "Ada")
    #expect(screen.error == .cancelled)
    #expect(await screen.group.settled())
    #expect(await transport.cancellations.wait(for: 1).count == 1)
}

@Test func theArticleShowsThisFilesCodeAsWritten() throws {
    try expectArticle("YourFirstScreen", blocks: 2)
}
