package nodeharness

import (
	"bytes"
	"context"
	"fmt"
	"path"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// staticPodFile is where a static test pod's manifest goes in the node's
// staticPodPath; the prefix keeps the suites' manifests apart from the
// node's own.
func staticPodFile(dir, name string) string {
	return path.Join(dir, "evictkit-e2e-"+name+".yaml")
}

// CreateStaticPod writes p as a static pod manifest into the kubelet's
// staticPodPath, in namespace ns. The kubelet runs it and posts a mirror
// pod named <name>-<node>, which the returned name is.
func (f *Framework) CreateStaticPod(ctx context.Context, ns string, p *corev1.Pod) (string, error) {
	dir, err := f.staticPodPath(ctx)
	if err != nil {
		return "", err
	}
	p = p.DeepCopy()
	p.APIVersion, p.Kind = "v1", "Pod"
	p.Namespace = ns
	p.Spec.NodeName = ""
	raw, err := yaml.Marshal(p)
	if err != nil {
		return "", err
	}
	file := staticPodFile(dir, p.Name)
	if _, err := f.ExecInput(ctx, bytes.NewReader(raw), "sh", "-c", fmt.Sprintf("cat >%s.tmp && mv %s.tmp %s", file, file, file)); err != nil {
		return "", err
	}
	return p.Name + "-" + f.Node, nil
}

// DeleteStaticPod removes a manifest CreateStaticPod wrote; the kubelet
// then stops the pod and deletes its mirror pod.
func (f *Framework) DeleteStaticPod(ctx context.Context, name string) error {
	dir, err := f.staticPodPath(ctx)
	if err != nil {
		return err
	}
	_, err = f.Exec(ctx, "rm", "-f", staticPodFile(dir, name))
	return err
}

func (f *Framework) staticPodPath(ctx context.Context) (string, error) {
	cfg, err := f.KubeletConfig(ctx)
	if err != nil {
		return "", err
	}
	if cfg.StaticPodPath == "" {
		return "", fmt.Errorf("node %s: the kubelet has no staticPodPath", f.Node)
	}
	return cfg.StaticPodPath, nil
}
