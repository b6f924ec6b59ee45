import Foundation
import NetworkScheduler

extension ScheduleTimeline {
    /// The timeline as a self-contained SVG picture (no script, font or file of its own), for
    /// a README, an issue or a CI artifact: a band per host line, a row per endpoint named
    /// beside it (with how many callers shared its busiest call), each call's wait in grey and
    /// its attempts on the wire in the colour of its priority, backoffs in amber; dependencies
    /// as dashed purple arrows, host pauses as red bands, marks as diamonds. Long stretches are
    /// drawn shorter than busy ones (the axis gives the real times), so that a busy second
    /// stays legible beside minutes of waiting. Each bar and mark names itself on hover. The
    /// callers that joined a call are counted here, and drawn in the trace (``traceEvents()``).
    ///
    /// - Parameter width: the picture's width in pixels.
    /// - Returns: the SVG document.
    public func svg(width: Int = 960) -> String {
        var drawing = SVGDrawing(timeline: self, width: max(width, 400))
        return drawing.render()
    }
}

/// Draws a ``ScheduleTimeline``, top to bottom: a title, a time axis, the tracks, a legend.
private struct SVGDrawing {
    let timeline: ScheduleTimeline
    let width: Int
    let left = 220.0
    let rowHeight = 16.0
    let rowGap = 4.0
    let headerHeight = 22.0
    let scale: TimeScale
    var body: [String] = []
    /// Where each drawn row's top is, by track and the row's index in its track.
    var rowTops: [Int: [Int: Double]] = [:]

    init(timeline: ScheduleTimeline, width: Int) {
        self.timeline = timeline
        self.width = width
        let moments = timeline.tracks.flatMap { track in
            track.rows.filter { !$0.holdsJoinersOnly }.flatMap(\.spans).flatMap { [$0.start, $0.end] }
                + track.pauses.flatMap { [$0.start, $0.end] } + track.markers.map(\.time)
        }
        scale = TimeScale(moments: moments, duration: timeline.duration, left: left, width: Double(width) - left - 20)
    }

    var plotWidth: Double { Double(width) - left - 20 }

    func x(_ time: TimeInterval) -> Double { scale.x(time) }

    mutating func render() -> String {
        var y = 24.0
        body.append(text(12, y, "Schedule: \(timeline.callCount) calls, \(timeline.sharedCallerCount) callers joined a call, "
            + ScheduleTimelineBuilder.seconds(timeline.duration), weight: "bold", size: 14))
        y += 14
        axis(top: y)
        y += 26
        for (index, track) in timeline.tracks.enumerated() {
            body.append(text(12, y + 14, track.name, weight: "bold"))
            y += headerHeight
            let drawn = track.rows.indices.filter { !track.rows[$0].holdsJoinersOnly }
            for (place, row) in drawn.enumerated() { rowTops[index, default: [:]][row] = y + Double(place) * (rowHeight + rowGap) }
            let height = Double(max(drawn.count, 1)) * (rowHeight + rowGap)
            for pause in track.pauses {
                body.append(rect(x(pause.start), y - 2, x(pause.end) - x(pause.start), height, fill: "#f85149", opacity: 0.18,
                                 title: "\(pause.name), \(ScheduleTimelineBuilder.seconds(pause.end - pause.start))"))
            }
            for row in drawn {
                let top = rowTops[index]?[row] ?? y
                rowLabel(track.rows[row], top: top)
                for span in track.rows[row].spans { bar(span, top: top) }
            }
            for marker in track.markers {
                let top: Double
                if let row = marker.row {
                    guard let rowTop = rowTops[index]?[row] else { continue }
                    top = rowTop
                } else {
                    top = y - headerHeight + 4
                }
                diamond(x(marker.time), top + rowHeight / 2, title: marker.name)
            }
            y += height + 6
        }
        for flow in timeline.flows where flow.kind == .dependency { arrow(flow) }
        y = legend(top: y + 8)
        let height = Int(y.rounded(.up)) + 8
        return """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(width)" height="\(height)" viewBox="0 0 \(width) \(height)" \
            font-family="-apple-system, Segoe UI, Helvetica, Arial, sans-serif" font-size="12">
            <defs><marker id="arrow" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="7" markerHeight="7" orient="auto-start-reverse">\
            <path d="M0,0 L8,4 L0,8 z" fill="context-stroke"/></marker></defs>
            <rect width="100%" height="100%" fill="#ffffff"/>
            \(body.joined(separator: "\n"))
            </svg>

            """
    }

    /// A tick about every 90 pixels, each labelled with the real time drawn there (the scale
    /// is not linear).
    mutating func axis(top: Double) {
        body.append(line(left, top + 10, left + plotWidth, top + 10, stroke: "#8c959f"))
        let ticks = max(1, Int(plotWidth / 90))
        for tick in 0...ticks {
            let position = left + plotWidth * Double(tick) / Double(ticks)
            body.append(line(position, top + 6, position, top + 14, stroke: "#8c959f"))
            let label = ScheduleTimelineBuilder.seconds(scale.time(at: position))
            body.append(text(position - (tick == ticks ? 34 : tick == 0 ? 0 : 14), top + 4, label, size: 10, fill: "#57606a"))
        }
    }

    /// The row's endpoint, cut to its column, and how many callers shared its busiest call.
    mutating func rowLabel(_ row: ScheduleTimeline.Row, top: Double) {
        let count = row.callers > 1 ? "×\(row.callers)" : ""
        // About 6 pixels a character at this size.
        let room = Int((left - 36) / 6) - count.count - 1
        let name = row.label.count <= room ? row.label : String(row.label.prefix(max(room - 1, 1))) + "…"
        let title = row.label + (count.isEmpty ? "" : ", \(row.callers) callers shared its busiest call")
        body.append("<g><title>\(escape(title))</title>\(text(12, top + 12, name, size: 11, fill: "#24292f"))</g>")
        if !count.isEmpty {
            body.append(text(left - 8 - Double(count.count) * 6.5, top + 12, count, weight: "bold", size: 11, fill: "#0969da"))
        }
    }

    mutating func bar(_ span: ScheduleTimeline.Span, top: Double) {
        let start = x(span.start)
        let width = max(x(span.end) - start, 1.5)
        let title = ([span.name, ScheduleTimelineBuilder.seconds(span.end - span.start)]
            + span.details.map { "\($0.0): \($0.1)" }).joined(separator: "\n")
        switch span.kind {
        case .queued: body.append(rect(start, top, width, rowHeight, fill: "#d0d7de", title: title))
        case .backoff: body.append(rect(start, top + 4, width, rowHeight - 8, fill: "#d4a72c", title: title))
        case .wire: body.append(rect(start, top, width, rowHeight, fill: Self.colour(of: span.priority), title: title))
        // Not in a drawn row: joiners are counted beside their call's row, and a pause is a
        // band across its track.
        case .shared, .paused: break
        }
    }

    mutating func diamond(_ x: Double, _ y: Double, title: String) {
        body.append("<path d=\"M\(f(x)),\(f(y - 5)) L\(f(x + 4)),\(f(y)) L\(f(x)),\(f(y + 5)) L\(f(x - 4)),\(f(y)) z\" "
            + "fill=\"#bf3989\"><title>\(escape(title))</title></path>")
    }

    mutating func arrow(_ flow: ScheduleTimeline.Flow) {
        guard let from = rowTops[flow.from.track]?[flow.from.row], let to = rowTops[flow.to.track]?[flow.to.row] else { return }
        let (fromY, toY) = (from + rowHeight / 2, to + rowHeight / 2)
        body.append("<path d=\"M\(f(x(flow.from.time))),\(f(fromY)) L\(f(x(flow.to.time))),\(f(toY))\" stroke=\"#8250df\" "
            + "stroke-width=\"1.2\" fill=\"none\" stroke-dasharray=\"4 3\" marker-end=\"url(#arrow)\"><title>\(flow.kind.rawValue)</title></path>")
    }

    mutating func legend(top: Double) -> Double {
        var x = 12.0
        func entry(_ label: String, fill: String, opacity: Double = 1) {
            body.append(rect(x, top, 12, 12, fill: fill, opacity: opacity))
            body.append(text(x + 16, top + 10, label, size: 11))
            x += 26 + Double(label.count) * 6.2
        }
        entry("waiting in its line", fill: "#d0d7de")
        for priority in RequestPriority.allCases.reversed() { entry("\(priority)", fill: Self.colour(of: priority)) }
        entry("backoff", fill: "#d4a72c")
        entry("host paused", fill: "#f85149", opacity: 0.3)
        body.append(text(12, top + 30, "×N: callers that shared one call. Purple dashed arrow: a dependency. "
            + "◆ a retry, promotion, cache answer or host change.", size: 11, fill: "#57606a"))
        body.append(text(12, top + 46, "Long stretches are drawn shorter than busy ones: read the times on the axis.",
                         size: 11, fill: "#57606a"))
        return top + 52
    }

    static func colour(of priority: RequestPriority?) -> String {
        switch priority {
        case .critical: "#a40e26"
        case .high: "#cf222e"
        case .normal, nil: "#0969da"
        case .low: "#1a7f37"
        case .background: "#6e7781"
        }
    }

    func rect(_ x: Double, _ y: Double, _ width: Double, _ height: Double, fill: String, opacity: Double = 1,
              title: String? = nil) -> String {
        var element = "<rect x=\"\(f(x))\" y=\"\(f(y))\" width=\"\(f(width))\" height=\"\(f(height))\" rx=\"2\" fill=\"\(fill)\""
        if opacity < 1 { element += " fill-opacity=\"\(f(opacity))\"" }
        guard let title else { return element + "/>" }
        return element + "><title>\(escape(title))</title></rect>"
    }

    func line(_ x1: Double, _ y1: Double, _ x2: Double, _ y2: Double, stroke: String) -> String {
        "<line x1=\"\(f(x1))\" y1=\"\(f(y1))\" x2=\"\(f(x2))\" y2=\"\(f(y2))\" stroke=\"\(stroke)\"/>"
    }

    func text(_ x: Double, _ y: Double, _ content: String, weight: String? = nil, size: Int? = nil, fill: String? = nil) -> String {
        var element = "<text x=\"\(f(x))\" y=\"\(f(y))\""
        if let weight { element += " font-weight=\"\(weight)\"" }
        if let size { element += " font-size=\"\(size)\"" }
        if let fill { element += " fill=\"\(fill)\"" }
        return element + ">\(escape(content))</text>"
    }

    /// One decimal: enough for a pixel, and short.
    func f(_ value: Double) -> String {
        String(format: "%.1f", value)
    }

    /// Text as XML allows it: a URL's path or an error may hold `<`, `&` or quotes, and a
    /// path, decoded from its percent escapes, any character at all.
    func escape(_ text: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(text.count)
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&apos;"
            case _ where character.unicodeScalars.contains(where: Self.isForbiddenInXML): escaped += "?"
            default: escaped.append(character)
            }
        }
        return escaped
    }

    /// Whether XML 1.0 forbids `scalar` in a document, even escaped: a control character other
    /// than tab, line feed and carriage return, or U+FFFE or U+FFFF (its `Char` production). A
    /// carriage return is replaced too, so that a title stays on its lines.
    static func isForbiddenInXML(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x09, 0x0A: false
        case ..<0x20, 0xFFFE, 0xFFFF: true
        default: false
        }
    }
}
