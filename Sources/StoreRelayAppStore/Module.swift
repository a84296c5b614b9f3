// StoreRelayAppStore: see the module's files.
