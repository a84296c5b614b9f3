import Dispatch

extension DispatchQueue {
    /// The target of every queue whose work is short and never blocks: reading and parsing
    /// requests, answering, journal and delivery bookkeeping.
    ///
    /// A queue made with `DispatchQueue(label:)` targets an *overcommit* root queue, for which
    /// Dispatch starts a thread whenever work is pending and none is free; a request passing
    /// through half a dozen such queues kept 20-odd threads runnable on two cores, and the
    /// kernel spent a tenth of the gateway's CPU switching between them. A global queue is
    /// not overcommit: Dispatch keeps about one thread per core busy with it, and a hop
    /// between two queues targeting it is usually picked up by a thread already running.
    ///
    /// Queues that block (fdatasync, file writes, `getaddrinfo`) must not target it — a
    /// blocked thread here is a core's worth of work standing still — and keep their own
    /// overcommit threads.
    public static var nonBlockingWork: DispatchQueue { .global(qos: .userInitiated) }

    /// The target of long CPU work (signature verification): a pool of its own, also about
    /// one thread per core. At saturation hundreds of verifications wait; in the pool above
    /// they would sit in front of every short hop, and a webhook delivery, which takes
    /// several hops, would crawl behind them while its backlog grew. Two pools let the
    /// kernel share the cores between the two kinds of work instead.
    public static var cpuBoundWork: DispatchQueue { .global(qos: .utility) }
}
