// StoreRelayJSON: see the module's files.
