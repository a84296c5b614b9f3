#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `storerelay`: the App Store Server Notifications gateway. See `storerelay --help`.
exit(StoreRelayCommandLine.run(Array(CommandLine.arguments.dropFirst())))
