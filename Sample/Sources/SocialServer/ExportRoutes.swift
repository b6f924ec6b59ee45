import Foundation
import Hummingbird
import NIOCore

extension SocialRoutes {
    /// `GET /exports/{name}?bytes=N`: N bytes of a pattern, streamed, with a strong `ETag` of the
    /// exports' version; a `Range: bytes=START-` answered with 206 from START, unless its
    /// `If-Range` names another version (then all of it, with 200). Faults cut the body, ignore
    /// the range, or answer another one.
    func addExportRoutes(to router: Router<Context>) {
        router.get("/exports/:name") { request, context in
            await handle(.export, request, context) { _ in
                let size = max(0, request.uri.queryParameters.get("bytes", as: Int.self) ?? 1_000_000)
                let version = faults.exportsVersion
                let tag = "\"v\(version)\""
                let fault = Fault.taken
                var start = 0
                if fault?.ignoresRange != true, let asked = Self.rangeStart(request.headers[.range]),
                   request.headers[.ifRange].map({ $0 == tag }) ?? true {
                    guard asked < size else {
                        return Response(status: .rangeNotSatisfiable, headers: [.contentRange: "bytes */\(size)"])
                    }
                    start = fault?.wrongRange == true ? max(0, asked - 100) : asked
                }
                var headers: HTTPFields = [.contentType: "application/octet-stream", .eTag: tag, .acceptRanges: "bytes"]
                if start > 0 {
                    headers[.contentRange] = "bytes \(start)-\(size - 1)/\(size)"
                }
                let cut = fault?.cutAfterBytes
                let from = start
                return Response(status: start > 0 ? .partialContent : .ok, headers: headers,
                                body: ResponseBody(contentLength: size - start) { writer in
                                    var offset = from
                                    let end = cut.map { min(size, from + $0) } ?? size
                                    while offset < end {
                                        let count = min(64 * 1_024, end - offset)
                                        try await writer.write(ByteBuffer(bytes: ExportContent.bytes(offset..<(offset + count), version: version)))
                                        offset += count
                                    }
                                    if end < size { throw CutShort() }
                                    try await writer.finish(nil)
                                })
            }
        }
    }

    /// START of `bytes=START-`, the only form the exports serve.
    private static func rangeStart(_ value: String?) -> Int? {
        guard let value, value.hasPrefix("bytes="), value.hasSuffix("-") else { return nil }
        return Int(value.dropFirst("bytes=".count).dropLast())
    }

    private struct CutShort: Error {}
}

/// What every export holds: a pattern a client can check a download against, byte for byte.
public enum ExportContent {
    /// The byte at `offset` of every export of `version`.
    public static func byte(at offset: Int, version: Int) -> UInt8 {
        UInt8(truncatingIfNeeded: offset &* 31 &+ version &* 7)
    }

    /// The bytes `range` of an export of `version`. They repeat every 256 bytes: sliced from
    /// one block, cheap even in a debug build.
    public static func bytes(_ range: Range<Int>, version: Int) -> Data {
        let block = Data((0..<(64 * 1_024 + 256)).map { byte(at: $0, version: version) })
        var bytes = Data(capacity: range.count)
        var offset = range.lowerBound
        while offset < range.upperBound {
            let start = offset % 256
            let count = min(64 * 1_024, range.upperBound - offset)
            bytes.append(block[start..<(start + count)])
            offset += count
        }
        return bytes
    }
}
