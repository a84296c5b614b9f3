import StoreRelayCore

/// A JSON object under construction that keeps member order, so simulated payloads list
/// their fields in the order Apple's do (readers diff them against real ones).
struct OrderedFields {
    private(set) var members: [JSONObject.Member] = []

    init(_ members: [(String, JSONValue)] = []) {
        self.members = members.map { (key: $0.0, value: $0.1) }
    }

    /// Replaces the value in place, or appends the member.
    mutating func set(_ key: String, _ value: JSONValue) {
        if let index = members.firstIndex(where: { $0.key == key }) {
            members[index].value = value
        } else {
            members.append((key: key, value: value))
        }
    }

    /// Inserts before `anchor` (or appends when absent); replaces when `key` is already there.
    mutating func insert(_ key: String, _ value: JSONValue, before anchor: String) {
        if members.contains(where: { $0.key == key }) { return set(key, value) }
        let index = members.firstIndex { $0.key == anchor } ?? members.endIndex
        members.insert((key: key, value: value), at: index)
    }

    mutating func remove(_ key: String) {
        members.removeAll { $0.key == key }
    }

    subscript(key: String) -> JSONValue? {
        members.first { $0.key == key }?.value
    }

    var value: JSONValue { .object(JSONObject(members)) }
}
