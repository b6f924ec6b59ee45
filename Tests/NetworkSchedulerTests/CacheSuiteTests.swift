import Foundation
import Testing
@testable import NetworkScheduler

/// The private-cache cases ported from the HTTP Caching Tests suite (http-tests/cache-tests),
/// by section: every case passes but those the section lists as deviations, each with its
/// reason; a deviation that starts passing fails too, so that the list stays true. The pass
/// rate by section is printed.
@Suite struct CacheSuiteTests {
    @Test(arguments: CacheSuiteSection.all)
    func theSectionPassesButForItsDeviations(_ section: CacheSuiteSection) async {
        var failed: [String: [String]] = [:]
        for testCase in section.cases {
            let problems = await testCase.run()
            if !problems.isEmpty { failed[testCase.id] = problems }
        }
        let required = section.cases.filter(\.isRequired)
        print("cache-tests \(section.name): \(section.cases.count - failed.count)/\(section.cases.count) pass, "
              + "required \(required.count(where: { failed[$0.id] == nil }))/\(required.count)")
        for (id, problems) in failed.sorted(by: { $0.key < $1.key }) where !section.deviations.contains(id) {
            Issue.record("\(id): \(problems.joined(separator: "; "))")
        }
        for id in section.deviations.sorted() where failed[id] == nil {
            Issue.record("\(id) passes now: take it off the section's deviations")
        }
    }
}
