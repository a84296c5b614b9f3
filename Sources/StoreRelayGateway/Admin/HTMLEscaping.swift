/// Escaping for text and attribute values in the admin page.
///
/// Every value that reaches the page goes through `escape`: dead letters carry data from
/// Apple's payloads and from downstream error messages, which an attacker may partly choose
/// (a product id, a webhook's error body).
public enum HTMLEscaping {
    /// `&`, `<`, `>`, `"` and `'` as character references: safe in text and in quoted
    /// attribute values alike.
    public static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
