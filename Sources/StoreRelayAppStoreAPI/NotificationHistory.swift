import StoreRelayCore

/// Get Notification History's request body (`NotificationHistoryRequest`): dates are UNIX
/// milliseconds. The same body is sent for every page of one query.
public struct NotificationHistoryQuery: Sendable, Hashable {
    public var startDate: Int64
    public var endDate: Int64
    /// Only notifications Apple failed to deliver (`onlyFailures`).
    public var onlyFailures: Bool

    public init(startDate: Int64, endDate: Int64, onlyFailures: Bool = false) {
        self.startDate = startDate
        self.endDate = endDate
        self.onlyFailures = onlyFailures
    }

    var body: [UInt8] {
        var members: [JSONObject.Member] = [("startDate", .integer(startDate)), ("endDate", .integer(endDate))]
        if onlyFailures { members.append(("onlyFailures", true)) }
        return JSONValue.object(JSONObject(members)).serializedBytes()
    }
}

/// One attempt of Apple's to deliver a notification (`SendAttemptItem`).
public struct SendAttempt: Sendable, Hashable {
    /// UNIX milliseconds.
    public var attemptDate: Int64?
    /// `SUCCESS`, `TIMED_OUT`, `TLS_ISSUE`, `NO_RESPONSE`, `UNSUCCESSFUL_HTTP_RESPONSE_CODE`…
    /// kept as Apple wrote it, so a value added later still shows.
    public var result: String

    static func list(_ value: JSONValue?) -> [SendAttempt] {
        (value?.arrayValue ?? []).compactMap { item in
            guard let result = item["sendAttemptResult"]?.stringValue else { return nil }
            return SendAttempt(attemptDate: item["attemptDate"]?.int64Value, result: result)
        }
    }
}

/// One page of Get Notification History (`NotificationHistoryResponse`).
public struct NotificationHistoryPage: Sendable {
    public struct Item: Sendable {
        /// The notification as Apple sent (or tried to send) it: a JWS.
        public var signedPayload: String
        public var sendAttempts: [SendAttempt]
    }

    public var items: [Item]
    public var hasMore: Bool
    /// The token for the next page, when `hasMore`.
    public var paginationToken: String?

    /// Reads Apple's JSON; an item without a `signedPayload` is not skipped silently but
    /// makes the page malformed, since skipping it would lose the notification.
    init(json: JSONValue) throws(AppStoreAPIError) {
        guard let history = json["notificationHistory"]?.arrayValue else {
            throw AppStoreAPIError(.malformedResponse, "the history response has no notificationHistory array")
        }
        var items: [Item] = []
        for (index, item) in history.enumerated() {
            guard let payload = item["signedPayload"]?.stringValue, !payload.isEmpty else {
                throw AppStoreAPIError(.malformedResponse, "notificationHistory[\(index)] has no signedPayload")
            }
            items.append(Item(signedPayload: payload, sendAttempts: SendAttempt.list(item["sendAttempts"])))
        }
        self.items = items
        hasMore = json["hasMore"]?.boolValue ?? false
        paginationToken = json["paginationToken"]?.stringValue
        if hasMore, paginationToken?.isEmpty ?? true {
            throw AppStoreAPIError(.malformedResponse, "the history response has more pages but no paginationToken")
        }
    }
}

/// Get Test Notification Status (`CheckTestNotificationResponse`).
public struct TestNotificationStatus: Sendable {
    /// The TEST notification Apple sent, when it has one to show.
    public var signedPayload: String?
    public var sendAttempts: [SendAttempt]
}
