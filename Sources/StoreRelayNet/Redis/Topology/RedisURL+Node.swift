extension RedisURL {
    /// The same credentials, TLS and database at another node: the primary a topology named.
    func at(_ node: HostPort) -> RedisURL {
        RedisURL(usesTLS: usesTLS, host: node.host, hostKind: node.kind, port: node.port, user: user, password: password,
                 database: database)
    }

    /// `node` without credentials or database: sentinels are asked anonymously (their
    /// password, if any, is not the primary's).
    func anonymous(at node: HostPort) -> RedisURL {
        RedisURL(usesTLS: usesTLS, host: node.host, hostKind: node.kind, port: node.port, user: nil, password: nil, database: 0)
    }

    /// The host and port, for comparing with what a topology names.
    var node: HostPort { HostPort(host: host, port: port, kind: hostKind) }
}
