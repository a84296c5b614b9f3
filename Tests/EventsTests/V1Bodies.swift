import StoreRelayCore

/// Synthetic V1 bodies shaped like Apple's `responseBodyV1`, for cases the single real
/// capture does not cover.
enum V1Bodies {
    static let secret = "s3cr3t-Sh4red"

    static func receipt(transactionId: String, originalTransactionId: String = "1000000000000001",
                        productId: String = "monthly", purchaseMs: Int64) -> JSONValue {
        [
            "quantity": "1",
            "product_id": .string(productId),
            "transaction_id": .string(transactionId),
            "original_transaction_id": .string(originalTransactionId),
            "purchase_date": "2020-11-25 08:26:02 Etc/GMT",
            "purchase_date_ms": .string(String(purchaseMs)),
            "purchase_date_pst": "2020-11-25 00:26:02 America/Los_Angeles",
            "original_purchase_date_ms": "1606292727000",
            "expires_date_ms": .string(String(purchaseMs + 300_000)),
            "expires_date": "2020-11-25 08:31:02 Etc/GMT",
            "web_order_line_item_id": "1000000057713932",
            "is_trial_period": "false",
            "is_upgraded": "true",
            "in_app_ownership_type": "PURCHASED",
        ]
    }

    static func pending(originalTransactionId: String = "1000000000000001", productId: String = "monthly",
                        autoRenewProductId: String = "monthly", autoRenewStatus: String = "1",
                        extra: [(String, JSONValue)] = []) -> JSONValue {
        var object = JSONObject([
            ("auto_renew_product_id", .string(autoRenewProductId)),
            ("original_transaction_id", .string(originalTransactionId)),
            ("product_id", .string(productId)),
            ("auto_renew_status", .string(autoRenewStatus)),
            ("is_in_billing_retry_period", "0"),
        ])
        for (key, value) in extra { object[key] = value }
        return .object(object)
    }

    /// A body of `type`; `top` adds or replaces top-level members.
    static func body(type: String, receipts: [JSONValue]? = nil, pending: [JSONValue]? = nil,
                     top: [(String, JSONValue)] = []) -> JSONObject {
        let receipts = receipts ?? [receipt(transactionId: "2", purchaseMs: 1_606_292_762_000),
                                    receipt(transactionId: "1", purchaseMs: 1_606_292_462_000)]
        var object = JSONObject([
            ("notification_type", .string(type)),
            ("password", .string(secret)),
            ("environment", "Sandbox"),
            ("bid", "com.acme.journal"),
            ("bvrs", "42"),
            ("unified_receipt", [
                "environment": "Sandbox",
                "latest_receipt": "ZmFrZV9yZWNlaXB0",
                "latest_receipt_info": .array(receipts),
                "pending_renewal_info": .array(pending ?? [Self.pending()]),
                "status": 0,
            ]),
        ])
        for (key, value) in top { object[key] = value }
        return object
    }

    static func bytes(_ object: JSONObject) -> [UInt8] { JSONValue.object(object).serializedBytes() }
}
