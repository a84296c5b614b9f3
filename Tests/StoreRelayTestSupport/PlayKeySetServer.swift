import StoreRelayNet
import StoreRelayCore

/// Google's certs URL as the tests serve it: a JWKS document over HTTPS (the shared test CA,
/// `ca-file` in `google-certs-url`), with the `Cache-Control` and status the test sets, and
/// a count of the fetches it answered. Change `document` to rotate keys.
public final class PlayKeySetServer: Sendable {
    public struct Answer: Sendable {
        public var status = 200
        public var document: String
        public var cacheControl: String? = "public, max-age=19000, must-revalidate, no-transform"
    }

    private let server: HTTPServer
    public let port: Int
    /// The test CA that vouches for this server's certificate.
    public let caFile: String
    private let answer: Locked<Answer>
    private let fetches = Locked(0)

    public init(document: String, tls: Bool = true) throws {
        let certificates = try TLSTestCertificates.shared()
        caFile = certificates.caFile
        let answer = Locked(Answer(document: document))
        self.answer = answer
        let fetches = fetches
        var configuration = HTTPServerConfiguration(address: "127.0.0.1:0")
        if tls {
            configuration.tls = try HTTPServerTLS(certificateChainFile: certificates.localhost.certificateFile,
                                                  privateKeyFile: certificates.localhost.privateKeyFile)
        }
        server = HTTPServer(configuration: configuration) { request, responder in
            fetches.withLock { $0 += 1 }
            let current = answer.current
            var headers = HTTPHeaders()
            if let cacheControl = current.cacheControl { headers.add(name: "Cache-Control", value: cacheControl) }
            _ = responder.respond(HTTPResponse(status: current.status, contentType: "application/json", body: current.document,
                                               headers: headers))
        }
        port = try server.start()
    }

    deinit { server.shutdown() }

    /// `https://127.0.0.1:PORT/oauth2/v3/certs`.
    public var url: String { "https://127.0.0.1:\(port)/oauth2/v3/certs" }

    /// The routes.conf line pointing the gateway here.
    public var configLine: String { "google-certs-url \(url) ca-file \(caFile)" }

    public var fetchCount: Int { fetches.current }

    public func set(_ change: (inout Answer) -> Void) { answer.withLock(change) }
}
