// StoreRelayFileQueue: see the module's files.
