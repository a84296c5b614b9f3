// StoreRelayEvents: see the module's files.
