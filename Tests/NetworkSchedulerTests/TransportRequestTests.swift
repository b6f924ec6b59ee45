import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import NetworkScheduler
import NetworkSchedulerTesting
import Testing

/// What a transport is handed: the request as the scheduler built it, read by its parts, and
/// the same request as a `URLRequest` for a transport over URLSession.
@Suite struct TransportRequestTests {
    @Test func aTransportReadsTheRequestByItsPartsAsTheSchedulerBuiltIt() async throws {
        let transport = RecordingTransport()
        let scheduler = RequestScheduler { $0.transport = transport }
        let api = APIClient(baseURL: URL(string: "https://api.test/v1")!, scheduler: scheduler,
                            defaultHeaders: ["X-Api-Key": "k1"], timeout: 7)
        let resource = Resource<User>(.post, path: "users", query: [URLQueryItem(name: "notify", value: "yes")],
                                      body: .data(Data("{}".utf8), contentType: "application/json"), decoding: .json())

        _ = try await api.value(for: resource)

        let request = try #require(transport.requests.first)
        #expect(request.method == "POST")
        #expect(request.urlString == "https://api.test/v1/users?notify=yes")
        #expect(request.value(forHTTPHeaderField: "x-api-key") == "k1")
        #expect(request.value(forHTTPHeaderField: "content-type") == "application/json")
        #expect(request.body == Data("{}".utf8))
        #expect(request.timeoutInterval == 7)
        #expect(request.prepared.isByParts, "handed over as built, not rebuilt from a URLRequest")
        let urlRequest = request.urlRequest
        #expect(urlRequest.url?.absoluteString == request.urlString)
        #expect(urlRequest.httpMethod == "POST")
        #expect(urlRequest.httpBody == request.body)
        #expect(urlRequest.value(forHTTPHeaderField: "X-Api-Key") == "k1")
    }

    @Test func aBodyFromAFileIsNotInMemoryEitherWay() throws {
        var built = URLRequest(url: URL(string: "https://api.test/upload")!)
        built.httpMethod = "PUT"
        built.httpBody = Data("ignored".utf8)
        let file = TransportRequest.BodyFile(url: URL(fileURLWithPath: "/tmp/photo.jpg"), length: 10)
        let request = TransportRequest(built, bodyFile: file)

        #expect(request.body == nil)
        #expect(request.urlRequest.httpBody == nil)
        #expect(request.bodyLength == 10)
        #expect(request.method == "PUT")
    }

    @Test func settingItsURLRequestReplacesTheRequest() {
        var request = TransportRequest(URLRequest(url: URL(string: "https://api.test/a")!))
        var other = URLRequest(url: URL(string: "https://api.test/b")!)
        other.httpMethod = "DELETE"
        request.urlRequest = other

        #expect(request.urlString == "https://api.test/b")
        #expect(request.method == "DELETE")
    }
}

/// Answers every request with a user at once, keeping each request it was handed.
private final class RecordingTransport: HTTPTransport, Sendable {
    var maximumConnectionsPerHost: Int { 6 }
    private let handed = Locked<[TransportRequest]>([])
    var requests: [TransportRequest] { handed.withLock { $0 } }

    private struct Task: TransportTask {
        func cancel() {}
    }

    func startTask(
        for request: TransportRequest, policy: TransportPolicy, progress: (@Sendable (TransferProgress) -> Void)?,
        completion: @escaping @Sendable (Result<TransportResponse, any Error>) -> Void
    ) -> any TransportTask {
        handed.withLock { $0.append(request) }
        completion(.success(TransportResponse(data: Data(userJSON.utf8), head: ResponseHead(
            url: request.urlString, statusCode: 200, headerFields: ["Content-Type": "application/json"]))))
        return Task()
    }
}
