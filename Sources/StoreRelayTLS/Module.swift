// StoreRelayTLS: see the module's files.
