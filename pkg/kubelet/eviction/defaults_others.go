//evictkit:file wired
//go:build !linux && !windows

package eviction

// DefaultEvictionHard holds the hard eviction thresholds a kubelet uses when
// none are configured. Inode signals are not defaulted on these platforms.
var DefaultEvictionHard = map[string]string{
	"memory.available":  "100Mi",
	"nodefs.available":  "10%",
	"imagefs.available": "15%",
}
