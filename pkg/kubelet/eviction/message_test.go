//evictkit:file decision

package eviction

import (
	"reflect"
	"testing"

	v1 "k8s.io/api/core/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
)

func statsPtr(s statsapi.PodStats) *statsapi.PodStats { return &s }

func thresholdPtr(t evictionapi.Threshold) *evictionapi.Threshold { return &t }

func annotations(containers, usage, starved string) map[string]string {
	return map[string]string{
		OffendingContainersKey:      containers,
		OffendingContainersUsageKey: usage,
		StarvedResourceKey:          starved,
	}
}

func TestThresholdEvictionMessage(t *testing.T) {
	memThreshold := thresholdPtr(hard(sigMem, "100Mi"))
	memObs := &observation{available: 50 * mi, capacity: 1 << 30}
	const memNode = "The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi. "

	cases := []struct {
		name      string
		resource  v1.ResourceName
		threshold *evictionapi.Threshold
		ob        *observation
		pod       *v1.Pod
		stats     *statsapi.PodStats
		podLevel  bool
		wantMsg   string
		wantAnn   map[string]string
	}{
		{
			name:      "memory: container over its request",
			resource:  v1.ResourceMemory,
			threshold: memThreshold, ob: memObs,
			pod:     pod("p", withMemRequest("100Mi")),
			stats:   statsPtr(podStats("p", withContainerStats(cStats("app", cWorkingSet("200Mi"))))),
			wantMsg: memNode + "Container app was using 200Mi, request is 100Mi, has larger consumption of memory. ",
			wantAnn: annotations("app", "200Mi", "memory"),
		},
		{
			name:      "memory: containers at or under their request are not named",
			resource:  v1.ResourceMemory,
			threshold: memThreshold, ob: memObs,
			pod:     pod("p", withMemRequest("100Mi")),
			stats:   statsPtr(podStats("p", withContainerStats(cStats("app", cWorkingSet("100Mi"))))),
			wantMsg: memNode,
			wantAnn: annotations("", "", "memory"),
		},
		{
			name:      "memory: several containers, in stats order, ignoring unknown containers and missing stats",
			resource:  v1.ResourceMemory,
			threshold: memThreshold, ob: memObs,
			pod: pod("p", withContainers(
				container("a", rl("memory", "100Mi"), nil),
				container("b", rl("memory", "1Gi"), nil),
				container("c", nil, nil),
				container("d", nil, nil),
			)),
			stats: statsPtr(podStats("p", withContainerStats(
				cStats("c", cWorkingSet("1Mi")),
				cStats("debugger", cWorkingSet("9Gi")),
				cStats("b", cWorkingSet("500Mi")),
				cStats("d"),
				cStats("a", cWorkingSet("200Mi")),
			))),
			wantMsg: memNode +
				"Container c was using 1Mi, request is 0, has larger consumption of memory. " +
				"Container a was using 200Mi, request is 100Mi, has larger consumption of memory. ",
			wantAnn: annotations("c,a", "1Mi,200Mi", "memory"),
		},
		{
			name:      "memory: init containers are named too",
			resource:  v1.ResourceMemory,
			threshold: memThreshold, ob: memObs,
			pod: pod("p", withInitContainers(
				sidecar("proxy", rl("memory", "10Mi"), nil),
				container("setup", rl("memory", "10Mi"), nil),
			)),
			stats: statsPtr(podStats("p", withContainerStats(
				cStats("proxy", cWorkingSet("20Mi")),
				cStats("setup", cWorkingSet("30Mi")),
				cStats("app", cWorkingSet("1Ki")),
			))),
			wantMsg: memNode +
				"Container proxy was using 20Mi, request is 10Mi, has larger consumption of memory. " +
				"Container setup was using 30Mi, request is 10Mi, has larger consumption of memory. " +
				"Container app was using 1Ki, request is 0, has larger consumption of memory. ",
			wantAnn: annotations("proxy,setup,app", "20Mi,30Mi,1Ki", "memory"),
		},
		{
			name:      "memory: percentage threshold quantity",
			resource:  v1.ResourceMemory,
			threshold: thresholdPtr(hardPct(sigMem, 0.25)),
			ob:        &observation{available: 1536 * mi, capacity: 10 << 30},
			pod:       pod("p"),
			stats:     statsPtr(podStats("p")),
			wantMsg:   "The node was low on resource: memory. Threshold quantity: 2560Mi, available: 1536Mi. ",
			wantAnn:   annotations("", "", "memory"),
		},
		{
			name:      "memory: pod-level request with the gate",
			resource:  v1.ResourceMemory,
			threshold: memThreshold, ob: memObs,
			pod:      pod("p", withPodRequests(rl("memory", "1Gi"))),
			stats:    statsPtr(podStats("p", withWorkingSet("2Gi"), withContainerStats(cStats("app", cWorkingSet("2Gi"))))),
			podLevel: true,
			wantMsg: memNode +
				"Pod p was using 2Gi, request is 1Gi, has larger consumption of memory. " +
				"Container app was using 2Gi, request is 0, has larger consumption of memory. ",
			wantAnn: map[string]string{
				OffendingPodKey: "p", OffendingPodUsageKey: "2Gi",
				OffendingContainersKey: "app", OffendingContainersUsageKey: "2Gi", StarvedResourceKey: "memory",
			},
		},
		{
			// Upstream names the pod whether or not it is above its request.
			name:      "memory: pod-level request is named even when not exceeded",
			resource:  v1.ResourceMemory,
			threshold: memThreshold, ob: memObs,
			pod:      pod("p", withPodRequests(rl("memory", "1Gi"))),
			stats:    statsPtr(podStats("p", withWorkingSet("512Mi"))),
			podLevel: true,
			wantMsg:  memNode + "Pod p was using 512Mi, request is 1Gi, has larger consumption of memory. ",
			wantAnn: map[string]string{
				OffendingPodKey: "p", OffendingPodUsageKey: "512Mi",
				OffendingContainersKey: "", OffendingContainersUsageKey: "", StarvedResourceKey: "memory",
			},
		},
		{
			name:      "memory: pod-level request without the gate",
			resource:  v1.ResourceMemory,
			threshold: memThreshold, ob: memObs,
			pod:     pod("p", withPodRequests(rl("memory", "1Gi"))),
			stats:   statsPtr(podStats("p", withWorkingSet("2Gi"))),
			wantMsg: memNode,
			wantAnn: annotations("", "", "memory"),
		},
		{
			name:      "memory: pod-level resources without a memory request",
			resource:  v1.ResourceMemory,
			threshold: memThreshold, ob: memObs,
			pod:      pod("p", withPodRequests(rl("cpu", "1"))),
			stats:    statsPtr(podStats("p", withWorkingSet("2Gi"))),
			podLevel: true,
			wantMsg:  memNode,
			wantAnn:  annotations("", "", "memory"),
		},
		{
			name:      "memory: pod-level request without pod memory stats",
			resource:  v1.ResourceMemory,
			threshold: memThreshold, ob: memObs,
			pod:      pod("p", withPodRequests(rl("memory", "1Gi"))),
			stats:    statsPtr(podStats("p")),
			podLevel: true,
			wantMsg:  memNode,
			wantAnn:  annotations("", "", "memory"),
		},
		{
			name:      "ephemeral storage: writable layer plus logs, both needed",
			resource:  v1.ResourceEphemeralStorage,
			threshold: thresholdPtr(hard(sigNodeFs, "1Gi")),
			ob:        &observation{available: 512 * mi, capacity: 100 << 30},
			pod: pod("p", withPodRequests(rl("memory", "1Gi")), withContainers(
				container("app", rl("ephemeral-storage", "100Mi"), nil),
				container("side", nil, nil),
				container("rootonly", nil, nil),
				container("logsonly", nil, nil),
			)),
			stats: statsPtr(podStats("p", withWorkingSet("5Gi"), withContainerStats(
				cStats("app", cRootfs(150*mi, 1), cLogs(10*mi, 1)),
				cStats("side", cRootfs(mi, 1), cLogs(mi, 1)),
				cStats("rootonly", cRootfs(5<<30, 1)),
				cStats("logsonly", cLogs(5<<30, 1)),
			))),
			podLevel: true,
			wantMsg: "The node was low on resource: ephemeral-storage. Threshold quantity: 1Gi, available: 512Mi. " +
				"Container app was using 160Mi, request is 100Mi, has larger consumption of ephemeral-storage. " +
				"Container side was using 2Mi, request is 0, has larger consumption of ephemeral-storage. ",
			wantAnn: annotations("app,side", "160Mi,2Mi", "ephemeral-storage"),
		},
		{
			name:      "inodes: no container part, inode available in decimal",
			resource:  resourceInodes,
			threshold: thresholdPtr(hardPct(sigNodeIn, 0.25)),
			ob:        &observation{available: 5000, capacity: 409600},
			pod:       pod("p", withMemRequest("1")),
			stats:     statsPtr(podStats("p", withContainerStats(cStats("app", cRootfs(1<<30, 1<<20), cLogs(1<<30, 1<<20), cWorkingSet("1Gi"))))),
			wantMsg:   "The node was low on resource: inodes. Threshold quantity: 100Ki, available: 5k. ",
			wantAnn:   annotations("", "", "inodes"),
		},
		{
			name:      "pids: no container part, quantities in decimal",
			resource:  resourcePids,
			threshold: thresholdPtr(hard(sigPID, "1000")),
			ob:        &observation{available: 250, capacity: 4096},
			pod:       pod("p"),
			stats:     statsPtr(podStats("p", withProcesses(4000), withContainerStats(cStats("app", cWorkingSet("1Gi"))))),
			wantMsg:   "The node was low on resource: pids. Threshold quantity: 1k, available: 250. ",
			wantAnn:   annotations("", "", "pids"),
		},
		{
			name:      "pod without stats: node part only and no annotations",
			resource:  v1.ResourceMemory,
			threshold: memThreshold, ob: memObs,
			pod:      pod("p", withPodRequests(rl("memory", "1Gi"))),
			podLevel: true,
			wantMsg:  memNode,
			wantAnn:  map[string]string{},
		},
		{
			name:     "no threshold or observation: no threshold part",
			resource: v1.ResourceMemory,
			pod:      pod("p"),
			stats:    statsPtr(podStats("p", withContainerStats(cStats("app", cWorkingSet("1Mi"))))),
			wantMsg:  "The node was low on resource: memory. Container app was using 1Mi, request is 0, has larger consumption of memory. ",
			wantAnn:  annotations("app", "1Mi", "memory"),
		},
		{
			name:      "threshold without observation: no threshold part",
			resource:  v1.ResourceMemory,
			threshold: memThreshold,
			pod:       pod("p"),
			wantMsg:   "The node was low on resource: memory. ",
			wantAnn:   map[string]string{},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			msg, ann := thresholdEvictionMessage(tc.resource, tc.threshold, tc.ob, tc.pod, tc.stats, tc.podLevel)
			if msg != tc.wantMsg {
				t.Errorf("message:\n got  %q\n want %q", msg, tc.wantMsg)
			}
			if ann == nil {
				t.Fatal("annotations must not be nil")
			}
			if !reflect.DeepEqual(ann, tc.wantAnn) {
				t.Errorf("annotations:\n got  %v\n want %v", ann, tc.wantAnn)
			}
		})
	}
}
