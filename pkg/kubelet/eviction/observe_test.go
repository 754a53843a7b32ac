package eviction

import (
	"testing"
	"time"

	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
)

const oneGiB = 1 << 30

// fullSummary reports every figure the manager can observe, each
// filesystem at its own time.
func fullSummary() *statsapi.Summary {
	return summary(
		nodeMem(memUse(1*oneGiB, 3*oneGiB, t0)),
		allocMem(memUse(oneGiB/2, 2*oneGiB, t0.Add(time.Second))),
		nodeFs(fsStats(10*oneGiB, 100*oneGiB, 1000, 5000, t0.Add(2*time.Second))),
		imageFs(fsStats(20*oneGiB, 200*oneGiB, 2000, 6000, t0.Add(3*time.Second))),
		containerFs(fsStats(30*oneGiB, 300*oneGiB, 3000, 7000, t0.Add(4*time.Second))),
		pidStats(4096, 1000, t0.Add(5*time.Second)),
	)
}

func fullObservations() map[evictionapi.Signal]observation {
	return map[evictionapi.Signal]observation{
		evictionapi.SignalMemoryAvailable:            {available: 1 * oneGiB, capacity: 4 * oneGiB, time: t0},
		evictionapi.SignalAllocatableMemoryAvailable: {available: oneGiB / 2, capacity: 2*oneGiB + oneGiB/2, time: t0.Add(time.Second)},
		evictionapi.SignalNodeFsAvailable:            {available: 10 * oneGiB, capacity: 100 * oneGiB, time: t0.Add(2 * time.Second)},
		evictionapi.SignalNodeFsInodesFree:           {available: 1000, capacity: 5000, time: t0.Add(2 * time.Second)},
		evictionapi.SignalImageFsAvailable:           {available: 20 * oneGiB, capacity: 200 * oneGiB, time: t0.Add(3 * time.Second)},
		evictionapi.SignalImageFsInodesFree:          {available: 2000, capacity: 6000, time: t0.Add(3 * time.Second)},
		evictionapi.SignalContainerFsAvailable:       {available: 30 * oneGiB, capacity: 300 * oneGiB, time: t0.Add(4 * time.Second)},
		evictionapi.SignalContainerFsInodesFree:      {available: 3000, capacity: 7000, time: t0.Add(4 * time.Second)},
		evictionapi.SignalPIDAvailable:               {available: 3096, capacity: 4096, time: t0.Add(5 * time.Second)},
	}
}

// without returns the full observations minus some signals.
func without(signals ...evictionapi.Signal) map[evictionapi.Signal]observation {
	m := fullObservations()
	for _, s := range signals {
		delete(m, s)
	}
	return m
}

func TestObserveSummary(t *testing.T) {
	cases := []struct {
		name string
		in   *statsapi.Summary
		want map[evictionapi.Signal]observation
	}{
		{name: "full summary observes every signal", in: fullSummary(), want: fullObservations()},
		{name: "nil summary observes nothing", in: nil, want: nil},
		{name: "empty summary observes nothing", in: summary(), want: nil},
		{
			name: "no node memory",
			in:   func() *statsapi.Summary { s := fullSummary(); s.Node.Memory = nil; return s }(),
			want: without(evictionapi.SignalMemoryAvailable),
		},
		{
			name: "node memory without available bytes",
			in:   func() *statsapi.Summary { s := fullSummary(); s.Node.Memory.AvailableBytes = nil; return s }(),
			want: without(evictionapi.SignalMemoryAvailable),
		},
		{
			name: "node memory without working set",
			in:   func() *statsapi.Summary { s := fullSummary(); s.Node.Memory.WorkingSetBytes = nil; return s }(),
			want: without(evictionapi.SignalMemoryAvailable),
		},
		{
			name: "no pods system container",
			in: func() *statsapi.Summary {
				s := fullSummary()
				s.Node.SystemContainers = []statsapi.ContainerStats{{Name: statsapi.SystemContainerKubelet, Memory: memUse(1, 1, t0)}}
				return s
			}(),
			want: without(evictionapi.SignalAllocatableMemoryAvailable),
		},
		{
			name: "pods system container without memory",
			in:   func() *statsapi.Summary { s := fullSummary(); s.Node.SystemContainers[0].Memory = nil; return s }(),
			want: without(evictionapi.SignalAllocatableMemoryAvailable),
		},
		{
			name: "pods system container without available bytes",
			in: func() *statsapi.Summary {
				s := fullSummary()
				s.Node.SystemContainers[0].Memory.AvailableBytes = nil
				return s
			}(),
			want: without(evictionapi.SignalAllocatableMemoryAvailable),
		},
		{
			name: "no nodefs",
			in:   func() *statsapi.Summary { s := fullSummary(); s.Node.Fs = nil; return s }(),
			want: without(evictionapi.SignalNodeFsAvailable, evictionapi.SignalNodeFsInodesFree),
		},
		{
			name: "nodefs without capacity keeps inodes",
			in:   func() *statsapi.Summary { s := fullSummary(); s.Node.Fs.CapacityBytes = nil; return s }(),
			want: without(evictionapi.SignalNodeFsAvailable),
		},
		{
			name: "nodefs without free inodes keeps bytes",
			in:   func() *statsapi.Summary { s := fullSummary(); s.Node.Fs.InodesFree = nil; return s }(),
			want: without(evictionapi.SignalNodeFsInodesFree),
		},
		{
			name: "no runtime stats",
			in:   func() *statsapi.Summary { s := fullSummary(); s.Node.Runtime = nil; return s }(),
			want: without(evictionapi.SignalImageFsAvailable, evictionapi.SignalImageFsInodesFree,
				evictionapi.SignalContainerFsAvailable, evictionapi.SignalContainerFsInodesFree),
		},
		{
			name: "runtime without imagefs",
			in:   func() *statsapi.Summary { s := fullSummary(); s.Node.Runtime.ImageFs = nil; return s }(),
			want: without(evictionapi.SignalImageFsAvailable, evictionapi.SignalImageFsInodesFree),
		},
		{
			name: "imagefs without available bytes",
			in:   func() *statsapi.Summary { s := fullSummary(); s.Node.Runtime.ImageFs.AvailableBytes = nil; return s }(),
			want: without(evictionapi.SignalImageFsAvailable),
		},
		{
			name: "containerfs without inode total",
			in:   func() *statsapi.Summary { s := fullSummary(); s.Node.Runtime.ContainerFs.Inodes = nil; return s }(),
			want: without(evictionapi.SignalContainerFsInodesFree),
		},
		{
			name: "no rlimit",
			in:   func() *statsapi.Summary { s := fullSummary(); s.Node.Rlimit = nil; return s }(),
			want: without(evictionapi.SignalPIDAvailable),
		},
		{
			name: "rlimit without max pid",
			in:   func() *statsapi.Summary { s := fullSummary(); s.Node.Rlimit.MaxPID = nil; return s }(),
			want: without(evictionapi.SignalPIDAvailable),
		},
		{
			name: "rlimit without running processes",
			in:   func() *statsapi.Summary { s := fullSummary(); s.Node.Rlimit.NumOfRunningProcesses = nil; return s }(),
			want: without(evictionapi.SignalPIDAvailable),
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := observeSummary(tc.in)
			if got == nil {
				t.Fatal("observeSummary returned nil")
			}
			for _, info := range signalTable {
				have, ok := got.get(info.signal)
				want, wantOK := tc.want[info.signal]
				switch {
				case ok != wantOK:
					t.Errorf("%s: observed=%v, want observed=%v", info.signal, ok, wantOK)
				case ok && (have.available != want.available || have.capacity != want.capacity || !have.time.Equal(want.time)):
					t.Errorf("%s: got %+v, want %+v", info.signal, have, want)
				}
			}
		})
	}
}

func TestSignalObservationsUnknownSignal(t *testing.T) {
	o := &observationSet{}
	o.set("swap.available", observation{available: 1})
	if _, ok := o.get("swap.available"); ok {
		t.Error("an unknown signal must not be recorded")
	}
	if _, ok := o.get(evictionapi.SignalMemoryAvailable); ok {
		t.Error("an unset signal must not be observed")
	}
}
