/// Where the gateway's own events go and when they fire (SPEC "Event log, search and
/// operational events"): `operational-events -> NAME`, `intake-silence DURATION` and
/// `disk-low SIZE`, all top level.
public struct OperationalEventsConfiguration: Sendable, Equatable {
    public enum Defaults {
        /// Six hours: App Store traffic for a live app rarely pauses that long, and a shorter
        /// window would page for every quiet night of a small app.
        public static let intakeSilence: Duration = .seconds(6 * 3600)
        /// 1 GiB: a few minutes of a heavy burst of journal writes, and enough headroom for an
        /// operator to act before the journal refuses (SPEC "Durability").
        public static let diskLow = 1 << 30
    }

    /// The destination (of any kind) that receives them; nil: none are sent.
    public var destination: String?
    /// An accepted app and environment that received nothing for this long is reported silent.
    public var intakeSilence: Duration
    /// Free bytes on the data directory's file system below which `disk.low` is sent.
    public var diskLow: Int

    public init(destination: String? = nil, intakeSilence: Duration = Defaults.intakeSilence, diskLow: Int = Defaults.diskLow) {
        self.destination = destination
        self.intakeSilence = intakeSilence
        self.diskLow = diskLow
    }
}
