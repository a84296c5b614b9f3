import StoreRelayCore

/// JSON for people: two-space indentation, members in document order, numbers and string
/// escapes exactly as the compact serializer writes them. Used by `storerelay dlq show` and the
/// page's record view.
public enum PrettyJSON {
    public static func render(_ value: JSONValue) -> String {
        var out = ""
        write(value, indent: "", into: &out)
        return out
    }

    private static func write(_ value: JSONValue, indent: String, into out: inout String) {
        let inner = indent + "  "
        switch value {
        case .array(let elements) where !elements.isEmpty:
            out += "[\n"
            for (index, element) in elements.enumerated() {
                out += inner
                write(element, indent: inner, into: &out)
                out += index == elements.count - 1 ? "\n" : ",\n"
            }
            out += indent + "]"
        case .object(let object) where !object.isEmpty:
            out += "{\n"
            for (index, member) in object.members.enumerated() {
                out += inner + JSONValue.string(member.key).serialized() + ": "
                write(member.value, indent: inner, into: &out)
                out += index == object.count - 1 ? "\n" : ",\n"
            }
            out += indent + "}"
        default:
            out += value.serialized()
        }
    }
}
