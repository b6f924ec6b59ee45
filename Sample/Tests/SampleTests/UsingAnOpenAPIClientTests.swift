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

            // When a call fails: the server resets every connection to the feed.
            var alerts: [String] = []
            func show(_ feed: some Any) { Issue.record("the feed was shown: \(feed)") }
            func showAlert(_ text: String) { alerts.append(text) }
            server.faults[.feed] = Fault(resetConnection: true)
            do {
                let feed = try await withScheduling(group: screen) { try await client.getFeed() }.ok.body.json
                show(feed)
            } catch {
                switch ServiceError(unwrapping: error) {
                case .cancelled?: break // the screen went away
                case let failure?: showAlert(failure.localizedDescription)
                case nil: showAlert("The answer could not be read.") // the generated client's own error
                }
            }
            #expect(alerts.count == 1 && alerts.first != "The answer could not be read.", "\(alerts)")
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
        #expect(blocks.count == 4)
        for block in blocks {
            let indented = block.split(separator: "\n", omittingEmptySubsequences: false)
                .map { $0.isEmpty ? "" : "            " + $0 }.joined(separator: "\n")
            #expect(source.contains(indented), "the article shows code this file does not compile:\n\(block)")
        }
        // *Errors* shows the same catch.
        let errors = try String(contentsOf: root.appendingPathComponent(
            "Sources/NetworkScheduler/NetworkScheduler.docc/Errors.md"), encoding: .utf8)
        let catchBlock = try #require(errors.components(separatedBy: "```swift\n").last?.components(separatedBy: "```").first)
        #expect(catchBlock.contains("ServiceError(unwrapping: error)") && blocks.contains(catchBlock))
    }
}
