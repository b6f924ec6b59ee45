import Foundation
import Testing

/// The private-cache cases ported from the HTTP Caching Tests suite (http-tests/cache-tests),
/// by section, through the scheduler's cache over a stub transport and over real sockets to a
/// server on 127.0.0.1 by each transport: every case passes but those the section lists as
/// deviations, each with its reason; a deviation that starts passing fails too, so that the
/// list stays true. The pass rate by section is printed.
@Suite struct CacheSuiteTests {
    /// What the cases go through.
    enum Path: String, CaseIterable, CustomTestStringConvertible {
        case stub
        case urlSession
        case asyncHTTPClient

        var transport: TransportKind? {
            switch self {
            case .stub: nil
            case .urlSession: .urlSession
            case .asyncHTTPClient: .asyncHTTPClient
            }
        }

        var testDescription: String { "over \(rawValue)" }
    }

    @Test(arguments: CacheSuiteSection.all, Path.allCases)
    func theSectionPassesButForItsDeviations(_ section: CacheSuiteSection, over path: Path) async throws {
        let endpoint = try await CacheSuiteServer.start(over: path.transport)
        var failed: [String: [String]] = [:]
        for testCase in section.cases {
            let problems = await testCase.run(on: endpoint)
            if !problems.isEmpty { failed[testCase.id] = problems }
        }
        await endpoint.stop()
        let required = section.cases.filter(\.isRequired)
        print("cache-tests \(section.name) over \(path.rawValue): \(section.cases.count - failed.count)/\(section.cases.count) pass, "
              + "required \(required.count(where: { failed[$0.id] == nil }))/\(required.count)")
        for (id, problems) in failed.sorted(by: { $0.key < $1.key }) where !section.deviations.contains(id) {
            Issue.record("\(id): \(problems.joined(separator: "; "))")
        }
        for id in section.deviations.sorted() where failed[id] == nil {
            Issue.record("\(id) passes now: take it off the section's deviations")
        }
    }
}
