extension ClusterConfiguration {
    /// What `require-aof no` and `require-noeviction no` give up, one sentence each: logged at
    /// start and listed under `warnings` in `/api/status`, so an override is never silent.
    public var warnings: [String] {
        var warnings: [String] = []
        if !requireAOF {
            warnings.append("require-aof no: the server's appendonly and appendfsync are not checked; "
                + "an acknowledged notification is only as safe as its settings")
        }
        if !requireNoEviction {
            warnings.append("require-noeviction no: the server's maxmemory-policy is not checked; "
                + "a server that evicts keys may drop acknowledged events, dead letters and dedupe markers")
        }
        return warnings
    }
}
