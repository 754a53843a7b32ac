package nodeharness

import "fmt"

// Mi is a mebibyte, for sizes and thresholds in bytes.
const Mi = int64(1) << 20

// Quantity renders a byte or count figure for a kubelet threshold; a figure
// at or below zero becomes 1, the smallest threshold the kubelet accepts.
func Quantity(v int64) string {
	return fmt.Sprintf("%d", max(v, 1))
}

// The hogs below are the workload image's subcommands (test/images/workload)
// as container args; each reaches its size, then holds it until killed.

// MemoryHog allocates and touches size of memory at 40 MiB/s.
func MemoryHog(size string) []string {
	return []string{"memory", "-size", size, "-rate", "40Mi"}
}

// DiskHog writes size into dir at 20 MiB/s.
func DiskHog(dir, size string) []string {
	return []string{"disk", "-dir", dir, "-size", size, "-rate", "20Mi"}
}

// ThreadHog starts count threads over 10 processes, 250 a second.
func ThreadHog(count string) []string {
	return []string{"threads", "-count", count, "-procs", "10", "-rate", "250"}
}

// Chatter writes size of log to stdout and exits 0.
func Chatter(size string) []string {
	return []string{"chatter", "-size", size}
}
