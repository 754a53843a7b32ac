//evictkit:file decision

package eviction

import (
	"maps"
	"reflect"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
)

// memoryInput is a node with 8Gi of memory, a hard memory.available<1Gi
// threshold, and the given memory available, pods and stats.
func memoryInput(available int64, pods []*v1.Pod, stats ...statsapi.PodStats) *decideInput {
	thresholds := []evictionapi.Threshold{hard(sigMem, "1Gi")}
	prev := newDecisionState(len(thresholds))
	return &decideInput{
		thresholds:               thresholds,
		prev:                     &prev,
		obs:                      observations(ob{signal: sigMem, available: available, capacity: 8 << 30, at: t0}),
		pods:                     pods,
		stats:                    statsIndex(stats...),
		layout:                   singleFs,
		now:                      t0,
		transition:               5 * time.Minute,
		maxPodGracePeriodSeconds: 30,
	}
}

func victimNames(vs []victim) []string {
	var out []string
	for _, v := range vs {
		out = append(out, v.pod.Name)
	}
	return out
}

// signalResources are the resources the signals starve, as
// TestDecideReclaimStepsPerLayout expects them; an alpha feature's test
// file adds its signals' (addSignalResources).
var signalResources = map[evictionapi.Signal]v1.ResourceName{
	sigMem: v1.ResourceMemory, sigAlloc: v1.ResourceMemory, sigPID: resourcePids,
	sigNodeFs: v1.ResourceEphemeralStorage, sigImgFs: v1.ResourceEphemeralStorage, sigCtrFs: v1.ResourceEphemeralStorage,
	sigNodeIn: resourceInodes, sigImgIn: resourceInodes, sigCtrIn: resourceInodes,
}

func addSignalResources(m map[evictionapi.Signal]v1.ResourceName) bool {
	maps.Copy(signalResources, m)
	return true
}

func TestDecideReclaimStepsPerLayout(t *testing.T) {
	both := []reclaimStep{reclaimContainers, reclaimImages}
	containers := []reclaimStep{reclaimContainers}
	images := []reclaimStep{reclaimImages}
	layouts := []struct {
		name   string
		layout fsLayout
		steps  map[evictionapi.Signal][]reclaimStep
	}{
		{"single", singleFs, map[evictionapi.Signal][]reclaimStep{
			sigNodeFs: both, sigNodeIn: both, sigImgFs: both, sigImgIn: both, sigCtrFs: both, sigCtrIn: both,
		}},
		{"split without imagefs", splitOnlyFs, map[evictionapi.Signal][]reclaimStep{
			sigNodeFs: both, sigNodeIn: both, sigImgFs: both, sigImgIn: both, sigCtrFs: both, sigCtrIn: both,
		}},
		{"dedicated imagefs", dedicatedFs, map[evictionapi.Signal][]reclaimStep{
			sigImgFs: both, sigImgIn: both, sigCtrFs: both, sigCtrIn: both,
		}},
		{"split imagefs", splitFs, map[evictionapi.Signal][]reclaimStep{
			sigNodeFs: containers, sigNodeIn: containers, sigImgFs: images, sigImgIn: images, sigCtrFs: containers, sigCtrIn: containers,
		}},
	}
	classes := map[v1.ResourceName]rankClass{
		v1.ResourceMemory: rankByMemory, resourcePids: rankByProcesses,
		v1.ResourceEphemeralStorage: rankByDiskBytes, resourceInodes: rankByDiskInodes,
	}
	for _, l := range layouts {
		for _, info := range signalTable {
			signal := info.signal
			in := memoryInput(0, []*v1.Pod{pod("a")}, podStats("a"))
			in.layout = l.layout
			// A threshold of the signal's own operator, met: below 1000, or
			// (a signal that grows with pressure) above 1.
			th, available := hard(signal, "1000"), int64(1)
			if op := ruleOf(signal).operator; op != evictionapi.OpLessThan {
				th, available = hard(signal, "1"), 5000
				th.Operator = op
			}
			in.thresholds = []evictionapi.Threshold{th}
			in.obs = observations(ob{signal: signal, available: available, capacity: 10000})
			tg := decide(in).target
			if tg == nil {
				t.Errorf("%s/%s: no target", l.name, signal)
				continue
			}
			if !reflect.DeepEqual(tg.steps, l.steps[signal]) {
				t.Errorf("%s/%s: steps %v, want %v", l.name, signal, tg.steps, l.steps[signal])
			}
			if tg.resource != signalResources[signal] || tg.class != classes[signalResources[signal]] {
				t.Errorf("%s/%s: resource %s class %d, want %s class %d", l.name, signal, tg.resource, tg.class, signalResources[signal], classes[signalResources[signal]])
			}
		}
	}
}
