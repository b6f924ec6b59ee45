import Foundation
import NetworkScheduler
import OpenAPIRuntime

/// A generated client's request body as the scheduler sends it: in memory up to a limit,
/// else written to a temporary file as it is read, and sent from there (so that an upload
/// is never read whole into memory, and each retry can read it again). The scheduler owns the
/// file (``EndpointBody/temporaryFile(_:contentType:)``): it counts by its content, so identical
/// uploads share one call, and it is removed once no call may send it.
struct SpooledBody: Sendable {
    let body: EndpointBody

    /// Reads `body`: whole, if its length is known and at most `limit` bytes; else into a
    /// file in the temporary folder.
    init(_ body: HTTPBody, contentType: String, limit: Int) async throws {
        if case .known(let length) = body.length, length <= Int64(limit) {
            self.body = .data(try await Data(collecting: body, upTo: limit), contentType: contentType)
            return
        }
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("NetworkSchedulerOpenAPI-\(UUID().uuidString).body")
        guard FileManager.default.createFile(atPath: url.path, contents: nil,
                                             attributes: [.posixPermissions: 0o600]) else {
            throw ServiceError.invalidRequest(reason: "the upload could not be written to \(url.path)")
        }
        do {
            let handle = try FileHandle(forWritingTo: url)
            defer { try? handle.close() }
            for try await chunk in body {
                try handle.write(contentsOf: chunk)
            }
        } catch {
            try? FileManager.default.removeItem(at: url)
            throw error
        }
        self.body = .temporaryFile(url, contentType: contentType)
    }
}
