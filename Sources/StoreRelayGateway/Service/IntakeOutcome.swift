import StoreRelayNet
import StoreRelayCore

/// Why a notification was refused before anything was stored. Each case is one HTTP answer.
enum IntakeRejection: Error, Equatable {
    /// 400: not JSON, not a notification, bad base64 or JWS structure.
    case malformed(String)
    /// 401: bad signature, untrusted or invalid chain, missing Apple OIDs, bad alg, expired
    /// certificate, wrong V1 secret.
    case signature(String)
    /// 503: the journal cannot store it (disk full, read-only) or the gateway is stopping.
    case unavailable(String)

    var message: String {
        switch self {
        case .malformed(let m), .signature(let m), .unavailable(let m): m
        }
    }
}

/// What the gateway answers Apple for one notification.
enum IntakeOutcome: Equatable {
    case accepted(id: String)
    case duplicate(id: String)
    case quarantined(id: String)
    case rejected(IntakeRejection)

    /// The public listener's HTTP answer, as SPEC "Public listener" words it.
    var response: HTTPResponse {
        switch self {
        case .accepted(let id): Self.status("accepted", id: id)
        case .duplicate(let id): Self.status("duplicate", id: id)
        case .quarantined(let id): Self.status("quarantined", id: id)
        case .rejected(.malformed(let message)): HTTPResponse.error(.malformed, message: message)
        case .rejected(.signature(let message)):
            HTTPResponse.error(HTTPErrorCode(status: 401, code: "signature", message: message), message: message)
        case .rejected(.unavailable(let message)): HTTPResponse.error(.unavailable, message: message)
        }
    }

    /// A short label for logs and, later, metrics.
    var label: String {
        switch self {
        case .accepted: "accepted"
        case .duplicate: "duplicate"
        case .quarantined: "quarantined"
        case .rejected(.malformed): "malformed"
        case .rejected(.signature): "signature"
        case .rejected(.unavailable): "unavailable"
        }
    }

    private static func status(_ status: String, id: String) -> HTTPResponse {
        let body: JSONValue = ["status": .string(status), "id": .string(id)]
        return HTTPResponse.json(status: 200, body.serialized())
    }
}
