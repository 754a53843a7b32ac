package kindcluster

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
)

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kind.yaml")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

const header = "kind: Cluster\napiVersion: kind.x-k8s.io/v1alpha4\n"

func TestLoadConfig(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		wantErr string
		nodes   int
	}{
		{name: "no nodes defaults to one control plane", body: header, nodes: 1},
		{name: "three nodes", body: header + "nodes:\n- role: control-plane\n- role: worker\n- role: worker\n", nodes: 3},
		{name: "unknown field", body: header + "nodez: []\n", wantErr: "field nodez not found"},
		{name: "wrong kind", body: "kind: Pod\napiVersion: kind.x-k8s.io/v1alpha4\n", wantErr: `kind "Pod"`},
		{name: "not yaml", body: "kind: [", wantErr: "kind config"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := loadConfig(writeConfig(t, tt.body))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(cfg.Nodes) != tt.nodes {
				t.Errorf("nodes = %d, want %d", len(cfg.Nodes), tt.nodes)
			}
		})
	}
}

func TestLoadConfigRepositoryDefault(t *testing.T) {
	cfg, err := loadConfig(filepath.Join("..", "..", "kind-config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Name = DefaultName
	want := []string{"evictkit-control-plane", "evictkit-worker", "evictkit-worker2"}
	if got := nodeNames(cfg); !reflect.DeepEqual(got, want) {
		t.Errorf("nodes = %v, want %v", got, want)
	}
	reqs, err := diskRequests(cfg)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range reqs {
		got[r.node] = r.nodefs.String()
		if r.split() {
			got[r.node] += " + imagefs " + r.imagefs.String()
		}
	}
	// Only evictkit-worker has a dedicated image filesystem (the ImageFs specs).
	wantDisks := map[string]string{"evictkit-control-plane": "8Gi", "evictkit-worker": "8Gi + imagefs 1Gi", "evictkit-worker2": "1536Mi"}
	if !reflect.DeepEqual(got, wantDisks) {
		t.Errorf("dedicated filesystems = %v, want %v", got, wantDisks)
	}
}

func roles(cfg *v1alpha4.Cluster) string {
	var out []string
	for _, n := range cfg.Nodes {
		out = append(out, string(n.Role))
	}
	return strings.Join(out, ",")
}

func TestWithWorkers(t *testing.T) {
	base := func() *v1alpha4.Cluster {
		return &v1alpha4.Cluster{Name: "c", Nodes: []v1alpha4.Node{
			{Role: v1alpha4.ControlPlaneRole},
			{Role: v1alpha4.WorkerRole},
			{Role: v1alpha4.WorkerRole, Labels: map[string]string{LabelNodefsSize: "1Gi"}},
		}}
	}
	tests := []struct {
		workers   int
		wantRoles string
		wantNames []string
	}{
		{-1, "control-plane,worker,worker", []string{"c-control-plane", "c-worker", "c-worker2"}},
		{0, "control-plane", []string{"c-control-plane"}},
		{1, "control-plane,worker", []string{"c-control-plane", "c-worker"}},
		{4, "control-plane,worker,worker,worker,worker", []string{"c-control-plane", "c-worker", "c-worker2", "c-worker3", "c-worker4"}},
	}
	for _, tt := range tests {
		cfg := base()
		if err := withWorkers(cfg, tt.workers); err != nil {
			t.Fatal(err)
		}
		if got := roles(cfg); got != tt.wantRoles {
			t.Errorf("workers=%d: roles %s, want %s", tt.workers, got, tt.wantRoles)
		}
		if got := nodeNames(cfg); !reflect.DeepEqual(got, tt.wantNames) {
			t.Errorf("workers=%d: names %v, want %v", tt.workers, got, tt.wantNames)
		}
	}
	if err := withWorkers(&v1alpha4.Cluster{Nodes: []v1alpha4.Node{{Role: v1alpha4.WorkerRole}}}, 1); err == nil {
		t.Error("a config without a control plane was accepted")
	}
}

func TestDiskRequests(t *testing.T) {
	tests := []struct {
		name    string
		labels  map[string]string
		wantErr string
		want    string // "", "shared" or "split"
	}{
		{name: "none", labels: nil},
		{name: "shared", labels: map[string]string{LabelNodefsSize: "1Gi"}, want: "shared"},
		{name: "split", labels: map[string]string{LabelNodefsSize: "1Gi", LabelImagefsSize: "2Gi"}, want: "split"},
		{name: "imagefs alone", labels: map[string]string{LabelImagefsSize: "2Gi"}, wantErr: "needs " + LabelNodefsSize},
		{name: "not a quantity", labels: map[string]string{LabelNodefsSize: "big"}, wantErr: `label evictkit.dev/nodefs-size="big": not a quantity`},
		{name: "too small", labels: map[string]string{LabelNodefsSize: "1Mi"}, wantErr: "between 256Mi and 64Gi"},
		{name: "too large", labels: map[string]string{LabelNodefsSize: "1Ti"}, wantErr: "between 256Mi and 64Gi"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := &v1alpha4.Cluster{Name: "c", Nodes: []v1alpha4.Node{{Role: v1alpha4.ControlPlaneRole}, {Role: v1alpha4.WorkerRole, Labels: tt.labels}}}
			reqs, err := diskRequests(cfg)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "node c-worker") {
					t.Fatalf("error = %v, want one naming node c-worker and containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			if len(reqs) == 1 {
				got = "shared"
				if reqs[0].split() {
					got = "split"
				}
			}
			if got != tt.want {
				t.Errorf("got %q, want %q (%+v)", got, tt.want, reqs)
			}
		})
	}
}

func TestUnescapeMountPath(t *testing.T) {
	for in, want := range map[string]string{
		`/var/lib/evictkit`:        "/var/lib/evictkit",
		`/mnt/with\040space`:       "/mnt/with space",
		`/mnt/tab\011and\134slash`: "/mnt/tab\tand\\slash",
		`/mnt/trailing\04`:         `/mnt/trailing\04`,
	} {
		if got := unescapeMountPath(in); got != want {
			t.Errorf("unescapeMountPath(%q) = %q, want %q", in, got, want)
		}
	}
}
