//evictkit:file wired

package eviction

// DefaultEvictionHard holds the hard eviction thresholds a kubelet uses when
// none are configured.
var DefaultEvictionHard = map[string]string{
	"imagefs.available": "15%", "imagefs.inodesFree": "5%",
	"nodefs.available": "10%", "nodefs.inodesFree": "5%",
	"memory.available": "100Mi",
}
