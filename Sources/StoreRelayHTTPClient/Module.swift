// StoreRelayHTTPClient: see the module's files.
