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

    /// The target of delivery's queues (destination queues, webhook connections, file-queue
    /// completions): the same kind of short work, in a pool of its own. At saturation
    /// hundreds of verifications wait in the pool above; a webhook delivery takes several
    /// hops, and queued behind them each time it fell ever further behind what was accepted.
    /// With two pools the kernel shares the cores between accepting and delivering.
    public static var deliveryWork: DispatchQueue { .global(qos: .utility) }
}
