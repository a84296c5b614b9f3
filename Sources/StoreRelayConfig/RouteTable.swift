import StoreRelayCore

/// The frozen route table: the `route` lines in order, compiled once into a form that answers
/// "where does this event go" without allocation beyond the result.
///
/// Built from rules once (at load or reload) and then only read, from any thread.
public struct RouteTable: Sendable {
    /// The rules in file order.
    public let rules: [RouteRule]
    /// Every destination name the rules use, first-seen order; compiled rules refer to indices.
    private let names: [String]
    private let compiled: [CompiledRule]

    /// One rule with its columns turned into sets and a bit mask.
    private struct CompiledRule: Sendable {
        /// Bit `i` set: environment `AppStoreEnvironment.allCases[i]` matches.
        var environmentMask: UInt8
        /// nil: any bundle id.
        var bundleIds: Set<String>?
        /// nil: any type. Per type: nil any subtype, else the subtypes matched.
        var types: [String: Set<String>?]?
        /// Indices into `names`.
        var destinations: [Int]
    }

    /// Compiles `rules`. Destination names are not checked here: the parser checks them
    /// against the declared destinations and reports the line and column.
    public init(rules: [RouteRule]) {
        self.rules = rules
        var names: [String] = []
        var index: [String: Int] = [:]
        var compiled: [CompiledRule] = []
        for rule in rules {
            var mask: UInt8 = 0
            for (bit, environment) in AppStoreEnvironment.allCases.enumerated()
            where rule.environments?.contains(environment) ?? true {
                mask |= 1 << bit
            }
            var types: [String: Set<String>?]?
            if let patterns = rule.types {
                var table: [String: Set<String>?] = [:]
                for pattern in patterns {
                    switch (table[pattern.type], pattern.subtype) {
                    case (.some(.none), _): break  // already any subtype
                    case (_, .none): table[pattern.type] = .some(nil)
                    case (.some(.some(let set)), .some(let subtype)): table[pattern.type] = .some(set.union([subtype]))
                    case (.none, .some(let subtype)): table[pattern.type] = .some([subtype])
                    }
                }
                types = table
            }
            let destinations = rule.destinations.map { name in
                if let existing = index[name] { return existing }
                index[name] = names.count
                names.append(name)
                return names.count - 1
            }
            compiled.append(CompiledRule(
                environmentMask: mask, bundleIds: rule.bundleIds.map(Set.init), types: types,
                destinations: destinations))
        }
        self.names = names
        self.compiled = compiled
    }

    /// Every destination name used by some rule, in first-seen order.
    public var destinationNames: [String] { names }

    /// The destinations of every rule matching the event: their union, each name once, in the
    /// order first seen walking the rules top to bottom. Empty when no rule matches (the
    /// caller dead-letters the event as `unrouted`).
    public func destinations(environment: AppStoreEnvironment, bundleId: String, type: String, subtype: String?) -> [String] {
        let bit: UInt8 = 1 << UInt8(AppStoreEnvironment.allCases.firstIndex(of: environment)!)
        var taken = [Bool](repeating: false, count: names.count)
        var result: [String] = []
        for rule in compiled where rule.environmentMask & bit != 0 {
            if let bundleIds = rule.bundleIds, !bundleIds.contains(bundleId) { continue }
            if let types = rule.types {
                guard let subtypes = types[type] else { continue }
                if let subtypes, !subtypes.contains(subtype ?? RouteRule.TypePattern.noSubtype) { continue }
            }
            for index in rule.destinations where !taken[index] {
                taken[index] = true
                result.append(names[index])
            }
        }
        return result
    }
}
