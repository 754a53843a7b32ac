//evictkit:file EvictionReclaimableMemory

package eviction

import (
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/component-base/featuregate"
	"k8s.io/klog/v2"
)

// evictionReclaimableMemory: the memory signals and the pods' memory
// ranking count clean page cache, which the kernel drops instead of
// killing anything, as available rather than used.
const evictionReclaimableMemory featuregate.Feature = "EvictionReclaimableMemory"

var _ = addAlphaFeature(alphaFeature{gate: evictionReclaimableMemory})

// Reclaimable memory (EvictionReclaimableMemory, alpha).
//
// Upstream's working set is usage minus inactive file pages (cAdvisor's
// rule), so a pod that reads a file twice moves its pages to the active
// list and they count as used: the node reports MemoryPressure and evicts
// pods while the kernel could drop the cache (kubernetes#43916). With the
// gate, each memory cgroup's working set is usage minus its clean file
// pages, read from the cgroup at the pass:
//
//	reclaimable = active_file + inactive_file − dirty − writeback − mapped
//
// never less than inactive_file (upstream's discount), so the node never
// reports less available memory than upstream would. Left as used, and why:
//   - dirty and under-writeback pages need I/O before they can go;
//   - mapped file pages (binaries, libraries, mmapped files) are dropped
//     only by unmapping them, which the processes fault back in at once;
//   - shmem and tmpfs pages (memory-backed emptyDirs) are swap-backed,
//     on the anon lists, never in the file counts;
//   - hugetlb pages are not in a memory cgroup's usage at all, and the
//     kernel's own reserve (vm.min_free_kbytes) is not subtracted: as
//     upstream, the threshold is what should cover it.
// memory.available, allocatableMemory.available and each pod's (and
// container's) working set are replaced by figures read this way at each
// monitoring pass, and at each fast pass when EvictionFastPath is on.
// Node-level MemAvailable (/proc/meminfo) is not used: on a node in a
// container (kind) it describes the host, and it counts slab and other
// memory the pods' figures do not.

// fileStatKeys are memory.stat's names of the file page counts a
// reclaimable figure needs: hierarchical totals on cgroup v1.
type fileStatKeys struct{ active, inactive, dirty, writeback, mapped string }

var (
	fileStatKeysV1 = fileStatKeys{"total_active_file", "total_inactive_file", "total_dirty", "total_writeback", "total_mapped_file"}
	fileStatKeysV2 = fileStatKeys{"active_file", "inactive_file", "file_dirty", "file_writeback", "file_mapped"}
)

// reclaimableFile is a cgroup's clean, unmapped file pages in bytes, at
// least its inactive file pages, from its memory.stat.
func reclaimableFile(stat []byte, v2 bool) (int64, error) {
	keys := fileStatKeysV1
	if v2 {
		keys = fileStatKeysV2
	}
	var errs []error
	field := func(key string) int64 {
		v, err := statField(stat, key)
		errs = append(errs, err)
		return v
	}
	active, inactive := field(keys.active), field(keys.inactive)
	dirty, writeback, mapped := field(keys.dirty), field(keys.writeback), field(keys.mapped)
	if err := errors.Join(errs...); err != nil {
		return 0, err
	}
	return max(active+inactive-dirty-writeback-mapped, inactive, 0), nil
}

// reclaimableMemory returns obs and stats with the memory figures read
// now from the memory cgroups with the reclaimable rule. A cgroup that
// cannot be read keeps the Summary API's figures; if none can, the pass
// goes on with those (and says so).
func (m *managerImpl) reclaimableMemory(logger klog.Logger, obs *observationSet, stats podStatsIndex, pods []*v1.Pod) (*observationSet, podStatsIndex) {
	r := m.reclaimReader(logger)
	if r == nil {
		return obs, stats
	}
	fresh, err := r.readNode(m.clock.Now(), true)
	if err != nil {
		logger.V(4).Info("Eviction manager: could not read every memory cgroup for reclaimable memory; those keep the Summary API's figures", "err", err)
	}
	return withFreshMemory(obs, stats, pods, fresh)
}

// reclaimReader is the reader of the node's memory cgroups with the
// reclaimable rule, opened at the first pass; nil (logged once) when the
// memory cgroups cannot be found.
func (m *managerImpl) reclaimReader(logger klog.Logger) *memcgReader {
	if m.reclaim.reader != nil || m.reclaim.failed {
		return m.reclaim.reader
	}
	r, err := newNodeMemcgReader(logger, m.config.PodCgroupRoot)
	if err == nil {
		_, err = r.readNode(m.clock.Now(), false)
	}
	if err != nil {
		m.reclaim.failed = true
		logger.Error(fmt.Errorf("memory cgroups: %w", err), "Eviction manager: EvictionReclaimableMemory is on but the memory cgroups cannot be read; memory signals use the Summary API's figures")
		return nil
	}
	r.reclaimable = true
	m.reclaim.reader = r
	logger.Info("Eviction manager: memory signals count clean page cache as available", "memoryCgroup", r.mount, "cgroupV2", r.v2)
	return r
}

// reclaimInputs is the reclaimable rule's reader, and whether opening it
// failed (it is not tried again).
type reclaimInputs struct {
	reader *memcgReader
	failed bool
}
