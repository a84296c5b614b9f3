import StoreRelayStorage
import StoreRelayVerification
import StoreRelayCore

extension EventSummary {
    /// What the event log keeps of `notification`, each of `destinations` pending.
    package init(notification: StoredNotification, destinations: [String]) {
        let event = notification.event
        self.init(id: notification.id, receivedAt: notification.receivedAt, type: event.type, subtype: event.subtype,
                  environment: event.environment?.rawValue, bundleId: event.bundleId,
                  originalTransactionId: event.originalTransactionId, transactionId: event.transactionId,
                  deliveries: destinations.map { Delivery(destination: $0, state: .pending) })
    }
}
