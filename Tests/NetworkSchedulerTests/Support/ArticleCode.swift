import Foundation
import Testing

/// Checks that the DocC article `name` of `module`'s catalog shows only code that the test file
/// `file` compiles: each of its `blocks` Swift code blocks must stand in the file as written,
/// indented by `indentation` spaces (the depth of the test that runs it).
func expectArticle(
    _ name: String, of module: String = "NetworkScheduler", showsCodeOf file: String = #filePath,
    blocks: Int, indentation: Int = 0
) throws {
    let here = URL(fileURLWithPath: file)
    let root = here.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    let article = try String(contentsOf: root.appendingPathComponent(
        "Sources/\(module)/\(module).docc/\(name).md"), encoding: .utf8)
    let source = try String(contentsOf: here, encoding: .utf8)
    let shown = article.components(separatedBy: "```swift\n").dropFirst().map { $0.components(separatedBy: "```")[0] }
    #expect(shown.count == blocks)
    let margin = String(repeating: " ", count: indentation)
    for block in shown {
        let indented = block.split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.isEmpty ? "" : margin + $0 }.joined(separator: "\n")
        #expect(source.contains(indented), "\(name) shows code that \(here.lastPathComponent) does not compile:\n\(block)")
    }
}
