// StoreRelaySimulator: see the module's files.
