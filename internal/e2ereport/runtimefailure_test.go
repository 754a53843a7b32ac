package e2ereport

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRuntimeCreateFailures(t *testing.T) {
	// The kubelet's event line for a container runc could not create, as
	// CI's kubelet log had it on 2026-12-07 (the runtime's reason made up).
	const runtimeLine = `I1207 02:15:48.170293     541 event.go:395] "Event occurred" object="localstorage-eviction-test-8166/emptydir-disk-below-sizelimit-pod" fieldPath="spec.containers{emptydir-disk-below-sizelimit-container}" kind="Pod" apiVersion="v1" type="Warning" reason="Failed" message="Error: failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: error during container init: error setting cgroup config for procHooks process: unable to freeze: unknown"`
	const evictedLine = `I1207 02:16:10.466081     541 event.go:395] "Event occurred" object="localstorage-eviction-test-8166/sidecar-container-disk-limit-pod" fieldPath="" kind="Pod" apiVersion="v1" type="Warning" reason="Evicted" message="Pod ephemeral local storage usage exceeds the total limit of containers 100Mi. "`
	const otherPodLine = `I1207 02:15:48.170293     541 event.go:395] "Event occurred" object="localstorage-eviction-test-8166/container-disk-limit-pod" fieldPath="spec.containers{c}" kind="Pod" apiVersion="v1" type="Warning" reason="Failed" message="Error: failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed"`
	const imagePullLine = `I1207 02:15:48.170293     541 event.go:395] "Event occurred" object="localstorage-eviction-test-8166/emptydir-disk-below-sizelimit-pod" fieldPath="spec.containers{c}" kind="Pod" apiVersion="v1" type="Warning" reason="Failed" message="Error: ErrImagePull"`
	for _, tc := range []struct {
		name, junit, log string
		wantPod, wantErr string
	}{
		{name: "runtime failed the pod", junit: "testdata/runtime-failed.xml", log: evictedLine + "\n" + runtimeLine + "\n",
			wantPod: "emptydir-disk-below-sizelimit-pod"},
		{name: "runtime failed another pod", junit: "testdata/runtime-failed.xml", log: otherPodLine + "\n" + evictedLine + "\n",
			wantErr: "no container runtime create failure for it"},
		{name: "pod failed otherwise", junit: "testdata/runtime-failed.xml", log: imagePullLine + "\n",
			wantErr: "no container runtime create failure for it"},
		{name: "spec failed otherwise", junit: "testdata/upstream-pass1.xml", log: runtimeLine + "\n",
			wantErr: "failed otherwise: Timed out after 300s."},
		{name: "nothing failed", junit: "testdata/upstream-pass2.xml", log: runtimeLine + "\n",
			wantErr: "no spec failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logPath := filepath.Join(t.TempDir(), "kubelet.log")
			if err := os.WriteFile(logPath, []byte(tc.log), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := RuntimeCreateFailures(tc.junit, logPath)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q (failures %+v)", err, tc.wantErr, got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 || got[0].Pod != tc.wantPod || !strings.Contains(got[0].Error, "unable to freeze") {
				t.Fatalf("failures = %+v, want pod %s with the runtime's error", got, tc.wantPod)
			}
		})
	}
}
