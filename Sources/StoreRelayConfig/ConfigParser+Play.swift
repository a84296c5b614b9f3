import StoreRelayNet
import StoreRelayCore

/// `play PACKAGE { push-audience URL; push-account EMAIL; service-account FILE }`,
/// `google-certs-url` and `google-api-url` (SPEC "Google Play real-time developer notifications").
extension ConfigParser {
    static let playOptions = ["push-audience", "push-account", "service-account"]
    static let playSyntax = "play PACKAGE { push-audience URL; push-account EMAIL; service-account FILE }"

    mutating func beginPlay(_ head: ConfigToken, _ arguments: [ConfigToken], opener: ConfigToken?) {
        playDeclared = true
        var isValid = arity(head, arguments, 1...1, "play PACKAGE { ... }")
        var packageName = arguments.first?.text ?? ""
        if isValid {
            let token = arguments[0]
            if let first = playLines[token.text] {
                report(.duplicate, at: token, "duplicate play '\(token.text)' (already declared at line \(first); each package may be declared once)")
                isValid = false
            } else if let name = value(token, "package name", Self.packageName) {
                packageName = name
                playLines[name] = token.line
            } else {
                isValid = false
            }
        }
        if opener == nil, isValid {
            report(.missingArgument, line: head.line, column: (arguments.last ?? head).endColumn,
                   "play '\(packageName)' needs a block with push-audience and push-account (expected \(Self.playSyntax))")
            isValid = false
        }
        let app = PlayAppConfiguration(packageName: packageName, pushAudience: "", pushAccount: "")
        let block = Block(kind: .play(app), name: packageName, label: "play '\(packageName)'", opener: opener ?? head, isValid: isValid)
        if opener != nil { state = .block(block) } else { close(block) }
    }

    mutating func playOption(_ head: ConfigToken, _ arguments: [ConfigToken], _ app: inout PlayAppConfiguration) {
        switch head.text {
        case "push-audience":
            guard arity(head, arguments, 1...1, "push-audience AUDIENCE (the push subscription's audience, e.g. https://relay.example.com/play)") else { return }
            if let audience = value(arguments[0], "push-audience", Self.pushAudience) { app.pushAudience = audience }
        case "push-account":
            guard arity(head, arguments, 1...1, "push-account EMAIL (the push subscription's service account)") else { return }
            if let account = value(arguments[0], "push-account", Self.serviceAccountEmail) { app.pushAccount = account }
        default:
            guard arity(head, arguments, 1...1, "service-account FILE (the service account's JSON key)") else { return }
            if let file = pathValue(arguments[0], "service-account file") { app.serviceAccountFile = file }
        }
    }

    /// Keeps a closed `play` block when it names both push settings; reports each missing one.
    mutating func closePlay(_ app: PlayAppConfiguration, _ block: Block) {
        var complete = true
        for (option, example) in [("push-audience", "push-audience https://relay.example.com/play"),
                                  ("push-account", "push-account pubsub-push@project.iam.gserviceaccount.com")]
        where block.seenOptions[option] == nil {
            report(.missingArgument, at: block.opener, "play '\(app.packageName)' has no '\(option)' (expected '\(example)' in its block: pushes are verified against it)")
            complete = false
        }
        // An option that was given but invalid has been reported already.
        guard complete, !app.pushAudience.isEmpty, !app.pushAccount.isEmpty else { return }
        playApps.append(app)
    }

    /// `google-certs-url URL [ca-file FILE]` and `google-api-url URL [ca-file FILE]`.
    mutating func googleEndpointDirective(_ head: ConfigToken, _ arguments: [ConfigToken]) {
        guard let (url, caFile) = endpointOverride(head, arguments, Self.googleURL) else { return }
        if head.text == "google-certs-url" {
            googleCerts = EndpointOverride(url: url, caFile: caFile)
        } else {
            googleAPI = EndpointOverride(url: url, caFile: caFile)
        }
    }

    /// `NAME URL [ca-file PEM-FILE]`, the shape of every directive that moves an API's host
    /// (`apple-api-url`, `google-certs-url`, `google-api-url`): the URL as `parse` reads it and
    /// the extra CA file; nil once an error is reported.
    mutating func endpointOverride(
        _ head: ConfigToken, _ arguments: [ConfigToken], _ parse: (String) throws(ConfigValueError) -> HTTPURL
    ) -> (HTTPURL, String?)? {
        let syntax = "\(head.text) URL [ca-file PEM-FILE]"
        guard once(head), arity(head, arguments, 1...3, syntax) else { return nil }
        guard let url = value(arguments[0], head.text, parse) else { return nil }
        guard arguments.count > 1 else { return (url, nil) }
        guard arguments[1].text == "ca-file", arguments.count == 3 else {
            report(.invalidValue, at: arguments[1], "expected 'ca-file PEM-FILE' after the URL (\(syntax))")
            return nil
        }
        guard let file = pathValue(arguments[2], "ca-file") else { return nil }
        return (url, file)
    }

    /// An http(s) URL; plain `http://` only to this machine: push-token keys and purchase
    /// answers fetched in the clear from elsewhere could be forged on the way.
    static func googleURL(_ text: String) throws(ConfigValueError) -> HTTPURL {
        let url = try HTTPURL.parseWebhook(text)
        guard url.scheme == .https || url.isLoopback else {
            throw ConfigValueError("'\(text)' is plain http:// to a host that is not this machine (expected https://, or http:// to a loopback address for tests)")
        }
        return url
    }

    /// Android package names: two or more dot-separated segments, each a letter followed by
    /// letters, digits and `_` (`com.acme.journal`).
    static func packageName(_ text: String) throws(ConfigValueError) -> String {
        let segments = text.split(separator: ".", omittingEmptySubsequences: false)
        let valid = segments.count >= 2 && text.utf8.count <= 255 && segments.allSatisfy { segment in
            guard let first = segment.unicodeScalars.first, ConfigLexer.isASCIILetter(first) else { return false }
            return segment.unicodeScalars.allSatisfy { ConfigLexer.isASCIILetter($0) || ("0"..."9").contains($0) || $0 == "_" }
        }
        guard valid else {
            throw ConfigValueError("'\(text)' is not an Android package name (expected dot-separated segments of letters, digits and '_', each starting with a letter, e.g. com.example.app)")
        }
        return text
    }

    /// Any non-empty printable text without spaces; Pub/Sub takes any string as an audience,
    /// and the console proposes the endpoint URL.
    static func pushAudience(_ text: String) throws(ConfigValueError) -> String {
        guard !text.isEmpty, text.utf8.count <= 2_048, text.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F }) else {
            throw ConfigValueError("'\(text.prefix(60))' is not an audience (expected printable text without spaces, e.g. https://relay.example.com/play; is its variable empty?)")
        }
        return text
    }

    /// `name@domain`: one `@`, something on both sides, no spaces.
    static func serviceAccountEmail(_ text: String) throws(ConfigValueError) -> String {
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, parts[1].contains("."), !parts[1].hasPrefix("."), !parts[1].hasSuffix("."),
              text.utf8.count <= 320, text.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F })
        else {
            throw ConfigValueError("'\(text.prefix(60))' is not a service account email (expected e.g. pubsub-push@project.iam.gserviceaccount.com)")
        }
        return text
    }

    /// A route's app column: an Apple bundle id or an Android package name.
    static func routeApp(_ text: String) throws(ConfigValueError) -> String {
        if let bundle = try? bundleId(text) { return bundle }
        if let package = try? packageName(text) { return package }
        throw ConfigValueError("'\(text)' is not a bundle id or package name (expected letters, digits, '.', '-' or '_', e.g. com.example.app)")
    }
}
