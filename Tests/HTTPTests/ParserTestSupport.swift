import StoreRelayNet

/// What a parser made of a whole input: its events, the error that stopped it (if any), and
/// whether bytes of an unfinished request remain.
struct ParseOutcome: Equatable, CustomStringConvertible {
    var events: [HTTPParserEvent] = []
    var error: HTTPParseError?
    var partial = false

    var requests: [HTTPRequest] {
        events.compactMap { if case .request(let request) = $0 { request } else { nil } }
    }

    var description: String {
        "events: \(events.map { if case .request(let r) = $0 { "request(\(r.method) \(r.target) body=\(r.body.count))" } else { "continue" } }), "
            + "error: \(error.map(String.init(describing:)) ?? "none"), partial: \(partial)"
    }
}

enum ParserHarness {
    /// Feeds `chunks` in order, collecting events until the first error.
    static func parse(_ chunks: [[UInt8]], limits: HTTPRequestParser.Limits = .init()) -> ParseOutcome {
        var parser = HTTPRequestParser(limits: limits)
        var outcome = ParseOutcome()
        feeding: for chunk in chunks {
            parser.feed(chunk)
            do {
                while let event = try parser.next() { outcome.events.append(event) }
            } catch {
                outcome.error = error
                break feeding
            }
        }
        outcome.partial = parser.hasPartialRequest
        return outcome
    }

    static func parse(_ text: String, limits: HTTPRequestParser.Limits = .init()) -> ParseOutcome {
        parse([Array(text.utf8)], limits: limits)
    }

    /// All at once, one byte at a time, and split in two at every offset.
    static func chunkings(of bytes: [UInt8]) -> [(name: String, chunks: [[UInt8]])] {
        var result: [(String, [[UInt8]])] = [("all at once", [bytes]), ("byte by byte", bytes.map { [$0] })]
        for offset in 1..<max(1, bytes.count) {
            result.append(("split at \(offset)", [Array(bytes[..<offset]), Array(bytes[offset...])]))
        }
        // Three pieces with uneven sizes catch state carried across more than one boundary.
        var pieces: [[UInt8]] = []
        var index = 0
        var size = 1
        while index < bytes.count {
            let end = min(bytes.count, index + size)
            pieces.append(Array(bytes[index..<end]))
            index = end
            size = size % 7 + 2
        }
        result.append(("uneven pieces", pieces))
        return result
    }
}
