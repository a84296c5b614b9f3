// StoreRelayGateway: see the module's files.
