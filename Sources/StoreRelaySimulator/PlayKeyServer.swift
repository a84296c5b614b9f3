public import StoreRelayNet

/// Serves the dev key set of `simulate --store play` over plain HTTP, as Google serves
/// `https://www.googleapis.com/oauth2/v3/certs`: a gateway whose `google-certs-url` names
/// `http://ADDR/oauth2/v3/certs` then verifies the simulator's pushes (plain http is
/// accepted for loopback hosts only).
///
/// Every GET and HEAD is answered with the key set, whatever its path, with Google's
/// `Cache-Control` shape. The set is the one loaded at start: a key made later by another
/// run (after `DATA/dev-play/` was removed) needs a restart.
public final class PlayKeyServer: Sendable {
    public static let path = "/oauth2/v3/certs"
    private let server: HTTPServer

    public init(keys: PlayDevKey, address: String) {
        var configuration = HTTPServerConfiguration(address: address)
        configuration.queueCount = 1
        let document = keys.keySet
        server = HTTPServer(configuration: configuration) { request, responder in
            guard request.method == "GET" || request.method == "HEAD" else {
                _ = responder.respond(HTTPResponse(status: 405, contentType: "text/plain", body: "GET the key set\n"))
                return
            }
            var response = HTTPResponse(status: 200, contentType: "application/json; charset=UTF-8", body: document)
            response.headers.add(name: "Cache-Control", value: "public, max-age=300, must-revalidate, no-transform")
            _ = responder.respond(response)
        }
    }

    /// Starts listening; the port bound (useful with port 0).
    public func start() throws(HTTPServerError) -> Int { try server.start() }

    public func shutdown() { server.shutdown() }
}
