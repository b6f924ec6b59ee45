// The code of the DocC article "Using an OpenAPI Client", as written there.
// `theArticleShowsThisFilesCodeAsWritten` fails when the two differ.
import Foundation
import NetworkScheduler
import NetworkSchedulerOpenAPI
@testable import SocialOpenAPI
import SocialServer
import Testing

@Suite struct UsingAnOpenAPIClientTests {
    @Test func theArticlesClientLogsInAndReadsTheFeedThroughTheScheduler() async throws {
        let server = try await SocialServer.start()
        let serverURL = server.baseURL
        do {
            let tokens = TokenStore()
            let scheduler = RequestScheduler { $0.cache = ResponseCache() }
            let api = APIClient(baseURL: serverURL, scheduler: scheduler, bearerToken: { tokens.token })
            let client = Client(serverURL: serverURL, transport: SchedulerClientTransport(client: api))

            let session = try await client.login(body: .json(.init(username: "ada", password: "secret"))).ok.body.json
            tokens.token = session.token
            let screen = RequestGroup()
            let feed = try await withScheduling(priority: .high, group: screen) {
                try await client.getFeed(query: .init(page: 1)).ok.body.json
            }

            #expect(feed.page == 1)
            #expect(server.arrivals.count(.feed) == 1)

            let transport = SchedulerClientTransport(client: api) { operationID in
                operationID == "getExport" ? SchedulingOptions(priority: .low, cachePolicy: .bypass) : SchedulingOptions()
            }
            let export = Client(serverURL: serverURL, transport: transport)
            let body = try await export.getExport(path: .init(name: "week"), query: .init(bytes: 10)).ok.body.binary
            #expect(try await Array(collecting: body, upTo: 100).count == 10)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    @Test func theArticleShowsThisFilesCodeAsWritten() throws {
        let here = URL(fileURLWithPath: #filePath)
        let root = here.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let article = try String(contentsOf: root.appendingPathComponent(
            "Sources/NetworkScheduler/NetworkScheduler.docc/UsingAnOpenAPIClient.md"), encoding: .utf8)
        let source = try String(contentsOf: here, encoding: .utf8)
        let blocks = article.components(separatedBy: "```swift\n").dropFirst().map { $0.components(separatedBy: "```")[0] }
        #expect(blocks.count == 3)
        for block in blocks {
            let indented = block.split(separator: "\n", omittingEmptySubsequences: false)
                .map { $0.isEmpty ? "" : "            " + $0 }.joined(separator: "\n")
            #expect(source.contains(indented), "the article shows code this file does not compile:\n\(block)")
        }
    }
}
