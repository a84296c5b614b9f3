/// Maps (method, exact path) to handlers. Built mutable, then frozen into `HTTPRoutes`.
///
/// ```swift
/// var router = HTTPRouter()
/// router.add("GET", "/healthz") { _, responder in responder.respond(.json("{}")) }
/// let server = HTTPServer(configuration: config, handler: router.freeze().handler)
/// ```
public struct HTTPRouter: Sendable {
    private var table: [String: [String: HTTPHandler]] = [:]

    public init() {}

    /// Registers `handler` for `method` (case-sensitive, e.g. `GET`) on the exact `path`.
    /// A later registration of the same pair replaces the earlier one.
    public mutating func add(_ method: String, _ path: String, _ handler: @escaping HTTPHandler) {
        table[path, default: [:]][method] = handler
    }

    public mutating func get(_ path: String, _ handler: @escaping HTTPHandler) { add("GET", path, handler) }
    public mutating func post(_ path: String, _ handler: @escaping HTTPHandler) { add("POST", path, handler) }

    /// The immutable table served on the hot path.
    public func freeze() -> HTTPRoutes { HTTPRoutes(table: table) }
}

/// A frozen routing table.
///
/// Unknown path: 404 `not_found`. Known path, other method: 405 `method_not_allowed` with
/// `Allow`. `HEAD` without its own route runs the `GET` handler; the server drops the body
/// and keeps `Content-Length` (RFC 9110 §9.3.2).
public struct HTTPRoutes: Sendable {
    private let table: [String: [String: HTTPHandler]]

    init(table: [String: [String: HTTPHandler]]) {
        self.table = table
    }

    public func handle(_ request: HTTPRequest, _ responder: HTTPResponder) {
        guard let methods = table[request.path] else {
            responder.respond(.error(.notFound))
            return
        }
        if let handler = methods[request.method] ?? (request.method == "HEAD" ? methods["GET"] : nil) {
            handler(request, responder)
            return
        }
        let allow = allowedMethods(for: request.path).joined(separator: ", ")
        responder.respond(.error(.methodNotAllowed, headers: ["Allow": allow]))
    }

    /// The methods served on `path`, sorted, with `HEAD` implied by `GET`; empty if unknown.
    public func allowedMethods(for path: String) -> [String] {
        guard let methods = table[path] else { return [] }
        var names = Set(methods.keys)
        if names.contains("GET") { names.insert("HEAD") }
        return names.sorted()
    }

    /// `handle` as a server handler.
    public var handler: HTTPHandler { { request, responder in handle(request, responder) } }
}
