extension RedisConfiguration {
    /// Adds `commands` to the checks every new connection runs, after those already there;
    /// `refusal` reads their replies (in order) and returns a sentence to refuse the
    /// connection. The checks already configured are asked first, so several concerns (the
    /// server's durability, this instance's claim on its id) each keep their own code.
    public mutating func addConnectionCheck(_ commands: [RESPCommand], refusal: @escaping @Sendable ([RESPValue]) -> String?) {
        let earlier = connectionChecks.count
        let previous = acceptConnection
        connectionChecks += commands
        acceptConnection = { replies in
            if let previous, let sentence = previous(Array(replies.prefix(earlier))) { return sentence }
            return refusal(Array(replies.dropFirst(earlier)))
        }
    }
}
