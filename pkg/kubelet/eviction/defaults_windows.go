//evictkit:file wired
//go:build windows

package eviction

// DefaultEvictionHard holds the hard eviction thresholds a kubelet uses when
// none are configured. Windows nodes keep a larger memory reserve.
var DefaultEvictionHard = map[string]string{
	"memory.available":  "500Mi",
	"nodefs.available":  "10%",
	"imagefs.available": "15%",
}
