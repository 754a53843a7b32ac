//evictkit:file notifier
//go:build !linux

package eviction

// hostLane is the cgroup hierarchy this host runs: none off Linux.
func hostLane() string { return "none" }
