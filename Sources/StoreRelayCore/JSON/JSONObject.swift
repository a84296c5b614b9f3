/// A JSON object that keeps its members in document order.
///
/// Lookups scan the members: App Store objects have a few dozen keys at most, where a linear
/// scan beats hashing every key on parse. The parser refuses a document with a duplicate key
/// (readers disagree on which value wins, so a signed value could be read one way and
/// forwarded another); setting an existing key through the subscript replaces its value.
public struct JSONObject: Sendable, Hashable, Sequence {
    public typealias Member = (key: String, value: JSONValue)

    public private(set) var members: [Member]

    public init() { members = [] }

    public init(_ members: [Member]) {
        self.members = []
        self.members.reserveCapacity(members.count)
        for member in members { self[member.key] = member.value }
    }

    public var count: Int { members.count }
    public var isEmpty: Bool { members.isEmpty }
    public var keys: [String] { members.map(\.key) }

    /// The value of `key`; setting nil removes the member, setting a new key appends it.
    public subscript(key: String) -> JSONValue? {
        get { members.first(where: { $0.key == key })?.value }
        set {
            if let index = members.firstIndex(where: { $0.key == key }) {
                if let newValue { members[index].value = newValue } else { members.remove(at: index) }
            } else if let newValue {
                members.append((key, newValue))
            }
        }
    }

    /// Appends a member the parser already knows to be new.
    mutating func appendUnchecked(_ key: String, _ value: JSONValue) {
        members.append((key, value))
    }

    /// Appends a member the parser read; false (and nothing changed) when `key` is there already.
    mutating func appendIfNew(_ key: String, _ value: JSONValue) -> Bool {
        guard !members.contains(where: { $0.key == key }) else { return false }
        members.append((key, value))
        return true
    }

    public func makeIterator() -> IndexingIterator<[Member]> { members.makeIterator() }

    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        lhs.members.count == rhs.members.count
            && zip(lhs.members, rhs.members).allSatisfy { $0.key == $1.key && $0.value == $1.value }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(members.count)
        for member in members {
            hasher.combine(member.key)
            hasher.combine(member.value)
        }
    }
}
