import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import NetworkScheduler
import Testing

@Suite struct ResponseHeadTests {
    private let url = URL(string: "https://api.example.com/users/1")!

    @Test func aPlainHeadFindsAFieldWhateverTheCaseOfItsName() {
        let head = ResponseHead(url: url, statusCode: 429, headerFields: ["Retry-After": "7", "etag": "\"v1\""])
        #expect(head.value(forHTTPHeaderField: "retry-after") == "7")
        #expect(head.value(forHTTPHeaderField: "ETag") == "\"v1\"")
        #expect(head.value(forHTTPHeaderField: "Content-Type") == nil)
        #expect(head.headerFields == ["retry-after": "7", "etag": "\"v1\""])
    }

    @Test func aHeadReadAsAListJoinsARepeatedFieldAndKeepsEveryOther() {
        let head = ResponseHead(url: "https://api.example.com/users/1", statusCode: 200, headerFields: [
            "Cache-Control": "max-age=60", "Set-Cookie": "a=1", "cache-control": "private", "ETag": "\"v2\"",
        ])
        #expect(head.value(forHTTPHeaderField: "CACHE-CONTROL") == "max-age=60, private")
        #expect(head.value(forHTTPHeaderField: "etag") == "\"v2\"")
        #expect(head.value(forHTTPHeaderField: "Vary") == nil)
        #expect(head.headerFields.values(for: "CACHE-CONTROL") == ["max-age=60", "private"])
        #expect(head.headerFields.names == ["Cache-Control", "Set-Cookie", "ETag"])
        #expect(head.url == url)
        let response = head.httpResponse
        #expect(response.value(forHTTPHeaderField: "Cache-Control") == "max-age=60, private")
        #expect(response.url == url)
        #expect(head == ResponseHead(url: url, statusCode: 200, headerFields: [
            "Cache-Control": "max-age=60, private", "Set-Cookie": "a=1", "ETag": "\"v2\"",
        ]), "the same head, whichever way it was read")
    }

    @Test(arguments: [
        ("text/plain; charset=iso-8859-1", "iso-8859-1"),
        ("text/plain;CHARSET=\"utf-16\"", "utf-16"),
        ("text/plain; format=flowed; charset = utf-8", "utf-8"),
        ("text/plain", nil),
        ("text/plain; charset", nil),
    ] as [(String, String?)])
    func aPlainHeadReadsTheCharsetItsContentTypeNames(contentType: String, charset: String?) {
        let head = ResponseHead(url: url, statusCode: 200, headerFields: ["Content-Type": contentType])
        #expect(head.textEncodingName == charset)
    }

    @Test func aPlainHeadBuildsFoundationsResponseOnlyWhenAsked() {
        let head = ResponseHead(url: url, statusCode: 201, headerFields: ["ETag": "v7"], httpVersion: "HTTP/2.0")
        let response = head.httpResponse
        #expect(response.statusCode == 201)
        #expect(response.url == url)
        #expect(response.value(forHTTPHeaderField: "etag") == "v7")
    }

    @Test func aURLSessionHeadKeepsTheResponseItCameWith() throws {
        let response = try #require(HTTPURLResponse(url: url, statusCode: 503, httpVersion: "HTTP/1.1",
                                                    headerFields: ["Retry-After": "3", "Content-Type": "text/plain; charset=utf-8"]))
        let head = ResponseHead(response)
        #expect(head.httpResponse === response)
        #expect(head.statusCode == 503)
        #expect(head.url == url)
        #expect(head.value(forHTTPHeaderField: "retry-after") == "3")
        #expect(head.textEncodingName == "utf-8")
        #expect(head.headerFields["retry-after"] == "3")
    }
}
