import StoreRelayCore

/// Anything that waits in a `DueHeap`.
protocol Scheduled {
    var due: Timestamp { get }
}

extension DeliveryJob: Scheduled {}
extension ParkedJob: Scheduled {}

/// Min-heap of jobs by due time: the destination's timer is armed for the root only, so
/// hundreds of waiting events cost no CPU until the earliest is due.
struct DueHeap<Job: Scheduled> {
    private var items: [(due: Int64, sequence: UInt64, job: Job)] = []
    private var nextSequence: UInt64 = 0

    var count: Int { items.count }
    var isEmpty: Bool { items.isEmpty }
    var earliest: Timestamp? { items.first.map { Timestamp(milliseconds: $0.due) } }
    /// Every job, in no particular order (a scrape's look over them; no order is kept by it).
    var jobs: some Sequence<Job> { items.lazy.map(\.job) }

    mutating func insert(_ job: Job) {
        // The sequence keeps equal due times in arrival order.
        items.append((job.due.milliseconds, nextSequence, job))
        nextSequence += 1
        var child = items.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard less(child, parent) else { break }
            items.swapAt(child, parent)
            child = parent
        }
    }

    mutating func popEarliest() -> Job? {
        guard !items.isEmpty else { return nil }
        items.swapAt(0, items.count - 1)
        let job = items.removeLast().job
        var parent = 0
        while true {
            let left = 2 * parent + 1, right = left + 1
            var smallest = parent
            if left < items.count, less(left, smallest) { smallest = left }
            if right < items.count, less(right, smallest) { smallest = right }
            guard smallest != parent else { break }
            items.swapAt(parent, smallest)
            parent = smallest
        }
        return job
    }

    /// Removes and returns every job (for shutdown and removed destinations).
    mutating func drain() -> [Job] {
        defer { items = [] }
        return items.map(\.job)
    }

    private func less(_ a: Int, _ b: Int) -> Bool {
        (items[a].due, items[a].sequence) < (items[b].due, items[b].sequence)
    }
}
