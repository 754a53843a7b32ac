package nodeharness

import (
	"context"
	"fmt"
	"net/url"
	"strings"
)

// kubeletKubeconfig is where kubeadm writes the kubelet's kubeconfig on a
// kind node.
const kubeletKubeconfig = "/etc/kubernetes/kubelet.conf"

// KubeletAPIServer returns the host and port the node's kubelet reaches
// the API server at, from its kubeconfig.
func (f *Framework) KubeletAPIServer(ctx context.Context) (host, port string, err error) {
	out, err := f.Exec(ctx, "cat", kubeletKubeconfig)
	if err != nil {
		return "", "", err
	}
	return ParseKubeconfigServer(out)
}

// ParseKubeconfigServer returns the host and port of the one server a
// kubeconfig names (https's 443 when it names no port).
func ParseKubeconfigServer(kubeconfig string) (host, port string, err error) {
	var servers []string
	for line := range strings.Lines(kubeconfig) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "server:"); ok {
			servers = append(servers, strings.TrimSpace(v))
		}
	}
	if len(servers) != 1 {
		return "", "", fmt.Errorf("%s: want one server, found %d", kubeletKubeconfig, len(servers))
	}
	u, err := url.Parse(servers[0])
	if err != nil || u.Host == "" {
		return "", "", fmt.Errorf("%s: server %q is not a URL with a host", kubeletKubeconfig, servers[0])
	}
	host, port = u.Hostname(), u.Port()
	if port == "" {
		port = "443"
	}
	return host, port, nil
}
