import StoreRelayCore

/// The startup pass over a queue directory. Runs on the writer queue before any append.
///
/// Open segments are closed rather than continued: a consumer then gets the previous run's
/// lines at once, and the new run starts in a fresh segment with a fresh age.
struct SegmentRecovery {
    let directory: String
    let compression: FileQueueOptions.Compression
    let logger: Logger
    var result = FileQueueRecovery()
    /// Closed segments still waiting for compression, oldest first.
    var toCompress: [UInt64] = []

    init(directory: String, compression: FileQueueOptions.Compression, logger: Logger) {
        self.directory = directory
        self.compression = compression
        self.logger = logger
    }

    mutating func run() throws(StorageError) {
        let names = try QueueFiles.listDirectory(directory)
        var segments: [UInt64: Set<QueueSegmentName.Kind>] = [:]
        for name in names {
            guard let segment = QueueSegmentName(parsing: name) else { continue }
            segments[segment.sequence, default: []].insert(segment.kind)
        }
        result.lastSequence = max(segments.keys.max() ?? 0, readSequenceFile(names))

        for name in names where name == QueueSegmentName.sequenceFile + ".tmp" { try remove(name) }
        for sequence in segments.keys.sorted() {
            let kinds = segments[sequence]!
            if kinds.contains(.compressing) { try remove(QueueSegmentName(sequence, .compressing).fileName) }
            var closed = kinds.contains(.closed)
            if kinds.contains(.open) {
                if try closeOpenSegment(sequence) {
                    closed = true
                }
            }
            guard compression == .gzip, closed else { continue }
            if kinds.contains(.compressed) {
                // The `.gz` was renamed into place only once complete, so the removal of
                // the uncompressed copy is all that was left to do.
                try remove(QueueSegmentName(sequence, .closed).fileName)
            } else {
                toCompress.append(sequence)
            }
        }
        try QueueFiles.syncDirectory(directory)
    }

    /// The sequence recorded in `.sequence`, or 0 when absent or unreadable.
    private func readSequenceFile(_ names: [String]) -> UInt64 {
        guard names.contains(QueueSegmentName.sequenceFile),
              let bytes = try? QueueFiles.readPrefix(directory + "/" + QueueSegmentName.sequenceFile, limit: 4096) else { return 0 }
        let text = String(decoding: bytes, as: UTF8.self).trimmingSuffix(while: { $0 == "\n" })
        guard let sequence = UInt64(text), sequence <= QueueSegmentName.maximumSequence else { return 0 }
        return sequence
    }

    private mutating func remove(_ name: String) throws(StorageError) {
        try QueueFiles.removeFile(directory + "/" + name)
        result.removedFiles.append(name)
        logger.notice("file queue removed a leftover file", [("filequeue.file", directory + "/" + name)])
    }
}

extension String {
    fileprivate func trimmingSuffix(while predicate: (Character) -> Bool) -> String {
        var copy = self
        while let last = copy.last, predicate(last) { copy.removeLast() }
        return copy
    }
}
