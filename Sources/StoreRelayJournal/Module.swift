// StoreRelayJournal: see the module's files.
