import Foundation
import Hummingbird
import NIOCore

extension SocialRoutes {
    /// `GET /exports/{name}?bytes=N`: N bytes of a pattern, streamed, with a strong `ETag` of the
    /// exports' version; a `Range: bytes=START-` (or `START-END`) answered with 206, unless its
    /// `If-Range` names another version (then all of it, with 200). Faults cut the body, ignore
    /// the range, or answer another one; the board's ``FaultBoard/ExportQuirks`` withhold the
    /// length, name no version, or answer a resume from the next version.
    func addExportRoutes(to router: Router<Context>) {
        router.get("/exports/:name") { request, context in
            await handle(.export, request, context) { _ in
                let size = max(0, request.uri.queryParameters.get("bytes", as: Int.self) ?? 1_000_000)
                let quirks = faults.exportQuirks
                let asked = Self.range(request.headers[.range])
                let resumes = (asked?.lowerBound ?? 0) > 0
                let version = faults.exportsVersion + (quirks.changesVersionOnResume && resumes ? 1 : 0)
                let tag = "\"v\(version)\""
                let fault = Fault.taken
                var range: ClosedRange<Int>?
                if fault?.ignoresRange != true, let asked,
                   quirks.changesVersionOnResume || (request.headers[.ifRange].map({ $0 == tag }) ?? true) {
                    guard asked.lowerBound < size else {
                        return Response(status: .rangeNotSatisfiable, headers: [.contentRange: "bytes */\(size)"])
                    }
                    let start = fault?.wrongRange == true ? max(0, asked.lowerBound - 100) : asked.lowerBound
                    range = start...min(size - 1, asked.upperBound)
                }
                var headers: HTTPFields = [.contentType: "application/octet-stream", .acceptRanges: "bytes"]
                if !quirks.namesNoVersion { headers[.eTag] = tag }
                if let range {
                    let total = quirks.withholdsLength ? "*" : "\(size)"
                    headers[.contentRange] = "bytes \(range.lowerBound)-\(range.upperBound)/\(total)"
                }
                let cut = fault?.cutAfterBytes
                let pause = fault?.bodyPauseMilliseconds
                let (from, upTo) = range.map { ($0.lowerBound, $0.upperBound + 1) } ?? (0, size)
                return Response(status: range != nil ? .partialContent : .ok, headers: headers,
                                body: ResponseBody(contentLength: upTo - from) { writer in
                                    var offset = from
                                    let end = cut.map { min(upTo, from + $0) } ?? upTo
                                    while offset < end {
                                        let count = min(64 * 1_024, end - offset)
                                        try await writer.write(ByteBuffer(bytes: ExportContent.bytes(offset..<(offset + count), version: version)))
                                        offset += count
                                        if let pause, offset < end { try await Task.sleep(for: .milliseconds(pause)) }
                                    }
                                    if end < upTo { throw CutShort() }
                                    try await writer.finish(nil)
                                })
            }
        }
    }

    /// The bytes `bytes=START-` or `bytes=START-END` asks for (END may be past the end).
    private static func range(_ value: String?) -> ClosedRange<Int>? {
        guard let value, value.hasPrefix("bytes=") else { return nil }
        let bounds = value.dropFirst("bytes=".count).split(separator: "-", omittingEmptySubsequences: false)
        guard bounds.count == 2, let start = Int(bounds[0]), start >= 0 else { return nil }
        if bounds[1].isEmpty { return start...Int.max - 1 }
        guard let end = Int(bounds[1]), end >= start else { return nil }
        return start...end
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
