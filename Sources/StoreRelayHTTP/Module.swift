// StoreRelayHTTP: see the module's files.
