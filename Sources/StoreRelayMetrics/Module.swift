// StoreRelayMetrics: see the module's files.
