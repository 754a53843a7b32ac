//evictkit:file wired

package eviction

import (
	"reflect"
	"strings"
	"testing"
	"time"

	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
)

// diskConfig is a configuration with distinct nodefs and imagefs
// thresholds, so that the source of each derived threshold shows.
func diskConfig() []evictionapi.Threshold {
	return []evictionapi.Threshold{
		hard(evictionapi.SignalMemoryAvailable, "100Mi"),
		minReclaim(hard(evictionapi.SignalNodeFsAvailable, "1Gi"), "100Mi"),
		soft(evictionapi.SignalNodeFsAvailable, "2Gi", time.Minute),
		hard(evictionapi.SignalNodeFsInodesFree, "1k"),
		soft(evictionapi.SignalNodeFsInodesFree, "2k", 2*time.Minute),
		minReclaim(hard(evictionapi.SignalImageFsAvailable, "5Gi"), "500Mi"),
		soft(evictionapi.SignalImageFsAvailable, "6Gi", 3*time.Minute),
		hard(evictionapi.SignalImageFsInodesFree, "5k"),
		soft(evictionapi.SignalImageFsInodesFree, "6k", 4*time.Minute),
	}
}

var diskConfigDescribed = []string{
	"memory.available LessThan 100Mi grace=0s reclaim=-",
	"nodefs.available LessThan 1Gi grace=0s reclaim=100Mi",
	"nodefs.available LessThan 2Gi grace=1m0s reclaim=-",
	"nodefs.inodesFree LessThan 1k grace=0s reclaim=-",
	"nodefs.inodesFree LessThan 2k grace=2m0s reclaim=-",
	"imagefs.available LessThan 5Gi grace=0s reclaim=500Mi",
	"imagefs.available LessThan 6Gi grace=3m0s reclaim=-",
	"imagefs.inodesFree LessThan 5k grace=0s reclaim=-",
	"imagefs.inodesFree LessThan 6k grace=4m0s reclaim=-",
}

func with(base []string, extra ...string) []string {
	return append(append([]string{}, base...), extra...)
}

func TestUpdateContainerFsThresholds(t *testing.T) {
	fromNodeFs := []string{
		"containerfs.available LessThan 1Gi grace=0s reclaim=100Mi",
		"containerfs.available LessThan 2Gi grace=1m0s reclaim=-",
		"containerfs.inodesFree LessThan 1k grace=0s reclaim=-",
		"containerfs.inodesFree LessThan 2k grace=2m0s reclaim=-",
	}
	fromImageFs := []string{
		"containerfs.available LessThan 5Gi grace=0s reclaim=500Mi",
		"containerfs.available LessThan 6Gi grace=3m0s reclaim=-",
		"containerfs.inodesFree LessThan 5k grace=0s reclaim=-",
		"containerfs.inodesFree LessThan 6k grace=4m0s reclaim=-",
	}
	// A missing source gives a zero threshold: no operator and no value,
	// which never fires; a soft slot without source even loses its grace.
	zeroDerived := []string{
		"containerfs.available  0% grace=0s reclaim=-",
		"containerfs.available  0% grace=0s reclaim=-",
		"containerfs.inodesFree  0% grace=0s reclaim=-",
		"containerfs.inodesFree  0% grace=0s reclaim=-",
	}
	cases := []struct {
		name           string
		in             []evictionapi.Threshold
		imageFs, split bool
		want           []string
		wantErr        []string
	}{
		{name: "single filesystem copies nodefs", in: diskConfig(), want: with(diskConfigDescribed, fromNodeFs...)},
		{name: "dedicated imagefs copies imagefs", in: diskConfig(), imageFs: true, want: with(diskConfigDescribed, fromImageFs...)},
		{name: "split imagefs and containerfs copies nodefs", in: diskConfig(), imageFs: true, split: true, want: with(diskConfigDescribed, fromNodeFs...)},
		{name: "split without imagefs derives nothing", in: diskConfig(), split: true, want: diskConfigDescribed},
		{
			name: "missing sources give zero-valued thresholds",
			in:   []evictionapi.Threshold{hard(evictionapi.SignalMemoryAvailable, "100Mi")},
			want: with([]string{"memory.available LessThan 100Mi grace=0s reclaim=-"}, zeroDerived...),
		},
		{
			name: "only hard sources leave the soft slots zero",
			in: []evictionapi.Threshold{
				hard(evictionapi.SignalImageFsAvailable, "5Gi"),
				hard(evictionapi.SignalImageFsInodesFree, "5k"),
			},
			imageFs: true,
			want: []string{
				"imagefs.available LessThan 5Gi grace=0s reclaim=-",
				"imagefs.inodesFree LessThan 5k grace=0s reclaim=-",
				"containerfs.available LessThan 5Gi grace=0s reclaim=-",
				"containerfs.available  0% grace=0s reclaim=-",
				"containerfs.inodesFree LessThan 5k grace=0s reclaim=-",
				"containerfs.inodesFree  0% grace=0s reclaim=-",
			},
		},
		{
			name: "the last of several thresholds on a source wins",
			in: []evictionapi.Threshold{
				hard(evictionapi.SignalNodeFsAvailable, "1Gi"),
				hard(evictionapi.SignalNodeFsAvailable, "3Gi"),
			},
			want: []string{
				"nodefs.available LessThan 1Gi grace=0s reclaim=-",
				"nodefs.available LessThan 3Gi grace=0s reclaim=-",
				"containerfs.available LessThan 3Gi grace=0s reclaim=-",
				"containerfs.available  0% grace=0s reclaim=-",
				"containerfs.inodesFree  0% grace=0s reclaim=-",
				"containerfs.inodesFree  0% grace=0s reclaim=-",
			},
		},
		{
			name: "configured containerfs thresholds are overridden in place",
			in: append([]evictionapi.Threshold{
				hard(evictionapi.SignalContainerFsAvailable, "42Gi"),
				soft(evictionapi.SignalContainerFsInodesFree, "42k", 9*time.Minute),
			}, diskConfig()...),
			want: with([]string{
				"containerfs.available LessThan 1Gi grace=0s reclaim=100Mi",
				"containerfs.inodesFree LessThan 2k grace=2m0s reclaim=-",
			}, with(diskConfigDescribed,
				"containerfs.available LessThan 2Gi grace=1m0s reclaim=-",
				"containerfs.inodesFree LessThan 1k grace=0s reclaim=-",
			)...),
			wantErr: []string{"containerfs.available", "containerfs.inodesFree"},
		},
		{
			name: "configured containerfs thresholds are overridden from imagefs",
			in: append(diskConfig(),
				soft(evictionapi.SignalContainerFsAvailable, "42Gi", time.Hour),
				hard(evictionapi.SignalContainerFsInodesFree, "42k"),
			),
			imageFs: true,
			want: with(diskConfigDescribed,
				"containerfs.available LessThan 6Gi grace=3m0s reclaim=-",
				"containerfs.inodesFree LessThan 5k grace=0s reclaim=-",
				"containerfs.available LessThan 5Gi grace=0s reclaim=500Mi",
				"containerfs.inodesFree LessThan 6k grace=4m0s reclaim=-",
			),
			wantErr: []string{"containerfs.available", "containerfs.inodesFree"},
		},
		{
			name: "configured containerfs thresholds are reported even when nothing is derived",
			in: append(diskConfig(),
				hard(evictionapi.SignalContainerFsAvailable, "42Gi"),
			),
			split:   true,
			want:    with(diskConfigDescribed, "containerfs.available LessThan 42Gi grace=0s reclaim=-"),
			wantErr: []string{"containerfs.available"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := UpdateContainerFsThresholds(tc.in, tc.imageFs, tc.split)
			if d := describeAll(got); !reflect.DeepEqual(d, tc.want) {
				t.Errorf("thresholds:\n got  %q\n want %q", d, tc.want)
			}
			if len(tc.wantErr) == 0 {
				if err != nil {
					t.Errorf("unexpected error: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("want an error mentioning %q, got none", tc.wantErr)
			}
			for _, m := range tc.wantErr {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("error %q does not mention %q", err, m)
				}
			}
		})
	}
}

func TestUpdateContainerFsThresholdsSharesMinReclaim(t *testing.T) {
	got, err := UpdateContainerFsThresholds(diskConfig(), false, false)
	if err != nil {
		t.Fatal(err)
	}
	nodeFs, containerFs := got[1], got[len(diskConfigDescribed)]
	if containerFs.Signal != evictionapi.SignalContainerFsAvailable || containerFs.MinReclaim != nodeFs.MinReclaim {
		t.Errorf("derived threshold %q should carry its source's minimum reclaim %q", describe(containerFs), describe(nodeFs))
	}
}
