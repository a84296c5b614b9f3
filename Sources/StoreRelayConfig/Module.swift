// StoreRelayConfig: see the module's files.
