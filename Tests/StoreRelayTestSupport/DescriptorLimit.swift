import Foundation

/// This process's file-descriptor limit, for tests that open connections by the thousand.
/// They gate on it with `.enabled(if:)`, so a machine that cannot give them enough shows a
/// counted skip rather than a pass.
public enum DescriptorLimit {
    /// Raises the soft limit towards the hard one if it is below `needed`; says whether
    /// `needed` descriptors are now allowed.
    public static func raise(toAtLeast needed: Int) -> Bool {
        var limit = rlimit()
        guard getrlimit(resource, &limit) == 0 else { return false }
        if limit.rlim_cur < rlim_t(needed) {
            limit.rlim_cur = min(rlim_t(needed) * 2, limit.rlim_max)
            guard setrlimit(resource, &limit) == 0 else { return false }
        }
        return limit.rlim_cur >= rlim_t(needed)
    }

    #if canImport(Glibc)
    private static let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    #else
    private static let resource = RLIMIT_NOFILE
    #endif
}
