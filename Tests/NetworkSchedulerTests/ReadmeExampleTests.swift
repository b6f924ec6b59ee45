import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import NetworkScheduler
import NetworkSchedulerTesting

// The README's quick example, kept here so that it always compiles and runs. Only the
// scheduler's transport differs: a stub instead of the network.

private struct Friend: Decodable, Sendable {
    let id: Int
    let name: String
}

private struct Session: Decodable, Sendable {
    let token: String
}

private struct Credentials: Encodable, Sendable {
    let user: String
    let password: String
}

private extension Resource where Model == [Friend] {
    static func friends(of userID: Int) -> Self {
        Resource(path: "users/\(userID)/friends")
    }
}

private extension Resource where Model == Session {
    static func login(_ credentials: Credentials) -> Self {
        Resource(.post, path: "login", body: .json(credentials))
    }
}

@Suite struct ReadmeExampleTests {
    @Test func theQuickExampleRunsAsWritten() async throws {
        let transport = StubTransport { request in
            request.url?.path == "/v1/login" ? .json(#"{"token": "abc"}"#) : .json(#"[{"id": 2, "name": "Grace"}]"#)
        }
        let tokens = TokenStore()

        // --- README ---
        let scheduler = RequestScheduler { $0.transport = transport }
        let api = APIClient(baseURL: URL(string: "https://api.example.com/v1")!, scheduler: scheduler,
                            bearerToken: { tokens.token })
        let screen = RequestGroup() // one per screen: cancels its requests when it goes away

        // async/await: cancelling the calling task cancels this caller only
        let friends = try await api.value(for: .friends(of: 42), priority: .high, group: screen)

        // completion handlers, with a dependency: the friends call waits for the login
        let login = api.send(.login(Credentials(user: "ada", password: "secret")), priority: .critical) { result in
            if case .success(let session) = result { tokens.token = session.token }
        }
        let done = EventLog<Int>()
        api.send(.friends(of: 42), priority: .high, group: screen, after: [login]) { result in
            switch result {
            case .success(let friends): done.append(friends.count) // show them
            case .failure(let error): print(error.localizedDescription) // every error is a ServiceError
            }
        }
        // --- end ---

        #expect(friends.map(\.name) == ["Grace"])
        #expect(await done.wait(for: 1) == [1])
        #expect(transport.arrivals.elements.last?.request.value(forHTTPHeaderField: "Authorization") == "Bearer abc")
    }
}
