import StoreRelayStorage
import StoreRelayVerification
import StoreRelayCore

extension EventSummary {
    /// What the event log keeps of `notification`, each of `destinations` pending. Parses the
    /// normalized event for the transaction id: build it on the log's queue, not on the way in.
    package init(notification: StoredNotification, destinations: [String]) {
        let event = notification.event
        let transactionId = event.json["transaction"]?["transactionId"]?.stringValue
        self.init(id: notification.id, receivedAt: notification.receivedAt, type: event.type, subtype: event.subtype,
                  environment: event.environment?.rawValue, bundleId: event.bundleId,
                  originalTransactionId: event.originalTransactionId, transactionId: transactionId,
                  deliveries: destinations.map { Delivery(destination: $0, state: .pending) })
    }
}
