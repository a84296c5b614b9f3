/// The names of queue files. A plain sort of the names is sequence order.
///
/// | name                         | meaning                                                 |
/// |------------------------------|---------------------------------------------------------|
/// | `<seq>.jsonl.open`           | the segment being appended to: consumers must skip it   |
/// | `<seq>.jsonl`                | closed: complete, whole lines, may be read and deleted  |
/// | `<seq>.jsonl.gz.tmp`         | compression in progress: consumers must skip it         |
/// | `<seq>.jsonl.gz`             | closed and compressed (gzip): may be read and deleted   |
/// | `.sequence`                  | the last sequence used, so sequences keep rising after  |
/// |                              |   consumers have deleted every segment                  |
///
/// `<seq>` is the sequence as 20 zero-padded decimal digits. Consumers that glob
/// `*.jsonl` and `*.jsonl.gz` see only closed segments.
struct QueueSegmentName: Hashable, Sendable {
    enum Kind: CaseIterable, Sendable {
        case open, closed, compressing, compressed

        var suffix: String {
            switch self {
            case .open: ".jsonl.open"
            case .closed: ".jsonl"
            case .compressing: ".jsonl.gz.tmp"
            case .compressed: ".jsonl.gz"
            }
        }
    }

    static let digits = 20
    /// Holds the last sequence used, in decimal, followed by a newline.
    static let sequenceFile = ".sequence"

    var sequence: UInt64
    var kind: Kind

    var fileName: String {
        let number = String(sequence)
        return String(repeating: "0", count: Self.digits - number.count) + number + kind.suffix
    }

    func path(in directory: String) -> String { directory + "/" + fileName }

    /// The segment a file name denotes, or nil for any other file (consumers' own files,
    /// strays), which the queue leaves alone.
    init?(parsing name: String) {
        let utf8 = name.utf8
        guard utf8.count > Self.digits else { return nil }
        let digits = utf8.prefix(Self.digits)
        guard digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
              let sequence = UInt64(String(decoding: digits, as: UTF8.self)), sequence <= Self.maximumSequence
        else { return nil }
        let suffix = String(decoding: utf8.dropFirst(Self.digits), as: UTF8.self)
        guard let kind = Kind.allCases.first(where: { $0.suffix == suffix }) else { return nil }
        self.init(sequence, kind)
    }

    /// The largest sequence taken as ours: a name (or `.sequence` content) near `UInt64.max`
    /// is someone else's file, and counting on from it would overflow.
    static let maximumSequence: UInt64 = UInt64.max / 2

    init(_ sequence: UInt64, _ kind: Kind) {
        self.sequence = sequence
        self.kind = kind
    }
}
