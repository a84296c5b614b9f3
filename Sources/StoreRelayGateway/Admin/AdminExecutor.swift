import Dispatch

/// Runs the admin listener's tasks on one serial Dispatch queue of its own.
///
/// The backend reads dead-letter files and the journal, which must not block the cooperative
/// pool; the cluster's reads suspend instead of blocking. As a task executor, the queue runs
/// every synchronous stretch of a request (file reads included) and is free while a request
/// waits for the server, so one stalled request never holds up the others.
final class AdminExecutor: TaskExecutor {
    private let queue: DispatchQueue

    init(label: String) {
        queue = DispatchQueue(label: label)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { [self] in job.runSynchronously(on: asUnownedTaskExecutor()) }
    }
}
