import Testing

/// The suites that spend seconds of CPU or memory (thousands of callers, gzip bombs, transfers
/// of tens of megabytes) run one test at a time, and not beside each other. Swift Testing runs
/// the other suites in parallel with them, so those wait with generous bounds: on two cores
/// under the thread sanitizer, the stress tests once left them without a thread for 11 s.
@Suite(.serialized) enum HeavyTests {}
