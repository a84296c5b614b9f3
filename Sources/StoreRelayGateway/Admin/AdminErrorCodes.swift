import StoreRelayNet

/// The admin listener's own error codes, beside the HTTP module's `malformed`, `not_found`
/// and `method_not_allowed`. Bodies are `{"error":"<code>","message":"<sentence>"}`.
extension HTTPErrorCode {
    /// No valid `Authorization: Bearer <token>` (or session, for the page).
    public static let unauthorized = HTTPErrorCode(
        status: 401, code: "unauthorized", message: "A valid admin token is required: send Authorization: Bearer <token>.")
    /// A page form posted without its session's CSRF token.
    public static let forbidden = HTTPErrorCode(
        status: 403, code: "forbidden", message: "The form's CSRF token is missing or wrong; reload the page.")
    /// A query parameter, identifier or body the API cannot act on.
    public static let badRequest = HTTPErrorCode(
        status: 400, code: "bad_request", message: "The request's parameters are invalid.")
    /// Too many failed authentications from this address lately (`LoginThrottle`).
    public static let tooManyAttempts = HTTPErrorCode(
        status: 429, code: "too_many_attempts", message: "Too many wrong admin tokens from this address; wait and retry.")
    /// A page request whose `Host` is a name other than localhost (`AdminHostCheck`).
    public static let misdirected = HTTPErrorCode(
        status: 421, code: "misdirected",
        message: "The admin page answers to an IP address or localhost in the Host header only (DNS rebinding).")
    /// What this gateway does not offer (an admin backend that keeps no event log).
    public static let notImplemented = HTTPErrorCode(
        status: 501, code: "not_implemented", message: "This gateway does not offer that in its current mode.")
    /// A store the request needs failed (the event log's files).
    public static let storageFailed = HTTPErrorCode(
        status: 500, code: "storage_failed", message: "A file the request needs could not be read.")
    /// The action conflicts with the resource's state (already replaying, no route).
    public static let conflict = HTTPErrorCode(
        status: 409, code: "conflict", message: "The request conflicts with the resource's current state.")
}
