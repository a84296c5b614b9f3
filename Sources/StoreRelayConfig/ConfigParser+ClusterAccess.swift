import StoreRelayNet

/// How an instance gets into the cluster server (docs/SPEC.md "Cluster mode on managed and
/// replicated servers"): `password` and `user` instead of (or overriding) the URL's, so the
/// URL can stay in a file while the password comes from the environment, and `client-cert`
/// for servers that want mutual TLS.
///
/// No message here quotes a password, not even part of one: `storerelay check`, logs and CI
/// output are pasted into tickets.
extension ConfigParser {
    /// Handles `password`, `user` and `client-cert`; false for any other option.
    mutating func clusterAccessOption(_ head: ConfigToken, _ arguments: [ConfigToken], _ options: inout ClusterConfiguration) -> Bool {
        switch head.text {
        case "password":
            guard secretArity(head, arguments, "password SECRET") else { return true }
            if let password = secretValue(arguments[0], "password") {
                options.url = options.url.replacingCredentials(user: nil, password: password.value)
            }
        case "user":
            guard arity(head, arguments, 1...1, "user NAME") else { return true }
            if let user = value(arguments[0], "user", Self.aclUserName) {
                options.url = options.url.replacingCredentials(user: user, password: nil)
            }
        case "client-cert":
            guard arity(head, arguments, 2...2, "client-cert CERT-FILE KEY-FILE") else { return true }
            if let certificate = pathValue(arguments[0], "client-cert certificate file"),
               let key = pathValue(arguments[1], "client-cert key file") {
                options.clientCertificate = TLSFiles(certificateFile: certificate, privateKeyFile: key)
            }
        default:
            return false
        }
        return true
    }

    /// Like `arity`, for a directive whose arguments may hold a secret: a missing or extra
    /// argument is reported where it is, never quoted.
    mutating func secretArity(_ head: ConfigToken, _ arguments: [ConfigToken], _ syntax: String) -> Bool {
        if arguments.count > 1 {
            report(.unexpectedArgument, at: arguments[1],
                   "unexpected text after '\(head.text)''s first argument (expected \(syntax); quote a value that contains spaces; "
                       + "the text is not shown, as it may be part of a password)")
            return false
        }
        return arity(head, arguments, 1...1, syntax)
    }

    /// An ACL user name as Redis takes it: printable ASCII without spaces, up to 128.
    static func aclUserName(_ text: String) throws(ConfigValueError) -> String {
        guard !text.isEmpty, text.utf8.count <= 128, text.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw ConfigValueError("'\(text.prefix(40))' is not a Redis ACL user name (expected up to 128 printable characters, no spaces)")
        }
        return text
    }
}
