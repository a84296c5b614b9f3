// StoreRelayCrypto: see the module's files.
