// Nothing to import: the target only defines `__tsan_default_suppressions` (see
// suppressions.c), which the thread sanitizer's runtime looks up in the test binary.
