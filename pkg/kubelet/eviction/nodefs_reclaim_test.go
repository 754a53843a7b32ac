//evictkit:file EvictionNodeFsReclaim

package eviction

import (
	"reflect"
	"testing"

	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
)

func TestNodeFsReclaimSteps(t *testing.T) {
	single, imageFs, split := fsLayout{}, fsLayout{dedicatedImageFs: true}, fsLayout{dedicatedImageFs: true, splitContainerFs: true}
	for _, tc := range []struct {
		name   string
		layout fsLayout
		signal evictionapi.Signal
		want   []reclaimStep
	}{
		{"imagefs layout, nodefs space", imageFs, evictionapi.SignalNodeFsAvailable, []reclaimStep{reclaimContainers}},
		{"imagefs layout, nodefs inodes", imageFs, evictionapi.SignalNodeFsInodesFree, []reclaimStep{reclaimContainers}},
		{"imagefs layout, imagefs space", imageFs, evictionapi.SignalImageFsAvailable, nil},
		{"imagefs layout, memory", imageFs, evictionapi.SignalMemoryAvailable, nil},
		{"single filesystem, nodefs", single, evictionapi.SignalNodeFsAvailable, nil},
		{"split layout, nodefs", split, evictionapi.SignalNodeFsAvailable, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := nodeFsReclaimSteps(tc.layout, tc.signal); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("nodeFsReclaimSteps = %v, want %v", got, tc.want)
			}
		})
	}
}

// Nodefs pressure on a node with a dedicated image filesystem. Without
// the gate the manager evicts at once (upstream's behaviour); with it,
// it removes dead containers first and evicts only if that does not
// relieve the pressure.
func TestMgrNodeFsReclaimWithDedicatedImageFs(t *testing.T) {
	for _, tc := range []struct {
		name       string
		gate       bool
		gcFrees    bool
		wantCalls  []string
		wantKilled []string
	}{
		{name: "gate off", wantKilled: []string{"logheavy"}},
		{name: "gate off, dead containers to remove", gcFrees: true, wantKilled: []string{"logheavy"}},
		{name: "gate on, removing dead containers relieves nodefs", gate: true, gcFrees: true, wantCalls: []string{fakeCallContainers}},
		{name: "gate on, removing dead containers is not enough", gate: true, wantCalls: []string{fakeCallContainers}, wantKilled: []string{"logheavy"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			setGateDuringTest(t, evictionNodeFsReclaim, tc.gate)
			n := fakeHealthyNode()
			n.nodeFsAvail = 500 * mi
			pods, st := mgrDiskPods()
			h := mgrNewHarness(t, mgrDiskConfig(), false, n.summary(mgrEpoch, st...))
			h.disk.imageFs = true
			h.pods = pods
			if tc.gcFrees {
				// The summary read after the reclaim shows nodefs relieved
				// past the threshold and its minimum reclaim.
				relieved := fakeHealthyNode()
				h.summary.next, h.summary.switchAfter = relieved.summary(mgrEpoch.Add(1), st...), 1
			}
			h.sync()
			if got := h.log.get(); !reflect.DeepEqual(got, tc.wantCalls) {
				t.Errorf("node-level reclaim = %v, want %v", got, tc.wantCalls)
			}
			if got := h.killedNames(); !reflect.DeepEqual(got, tc.wantKilled) {
				t.Errorf("killed = %v, want %v", got, tc.wantKilled)
			}
		})
	}
}
