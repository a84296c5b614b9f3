/// An ordered list of header fields with case-insensitive lookup.
///
/// Order and the original spelling of names are kept (some consumers sign or log headers as
/// received); lookups ignore ASCII case as RFC 9110 §5.1 requires. Repeated names are kept as
/// separate entries.
public struct HTTPHeaders: Sendable, Equatable, Sequence, ExpressibleByDictionaryLiteral {
    public typealias Element = (name: String, value: String)

    private var fields: [Element] = []

    public init() {}

    public init(_ fields: [(String, String)]) {
        self.fields = fields.map { (name: $0.0, value: $0.1) }
    }

    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements)
    }

    public var count: Int { fields.count }
    public var isEmpty: Bool { fields.isEmpty }

    public func makeIterator() -> IndexingIterator<[Element]> { fields.makeIterator() }

    /// The first value of `name`, or nil when absent.
    public subscript(name: String) -> String? {
        fields.first { HTTPSyntax.equalsIgnoringCase($0.name, name) }?.value
    }

    /// Every value of `name`, in order.
    public func values(for name: String) -> [String] {
        fields.filter { HTTPSyntax.equalsIgnoringCase($0.name, name) }.map(\.value)
    }

    public func contains(_ name: String) -> Bool { self[name] != nil }

    /// Appends a field, keeping any existing ones of the same name.
    public mutating func add(name: String, value: String) {
        fields.append((name: name, value: value))
    }

    /// Replaces every field named `name` with one field (appended if there was none).
    public mutating func replaceOrAdd(name: String, value: String) {
        guard let index = fields.firstIndex(where: { HTTPSyntax.equalsIgnoringCase($0.name, name) }) else {
            fields.append((name: name, value: value))
            return
        }
        fields[index].value = value
        var position = fields.count - 1
        while position > index {
            if HTTPSyntax.equalsIgnoringCase(fields[position].name, name) { fields.remove(at: position) }
            position -= 1
        }
    }

    /// Removes every field named `name`.
    public mutating func remove(name: String) {
        fields.removeAll { HTTPSyntax.equalsIgnoringCase($0.name, name) }
    }

    /// Whether a comma-separated header (such as `Connection`) lists `token`, ignoring case.
    public func containsToken(_ token: String, in name: String) -> Bool {
        let wanted = token.lowercased()
        return values(for: name).contains { HTTPSyntax.lowercasedListMembers($0).contains(wanted) }
    }

    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        lhs.fields.count == rhs.fields.count
            && zip(lhs.fields, rhs.fields).allSatisfy { $0.name == $1.name && $0.value == $1.value }
    }
}
