// Package framework is what the node e2e suites (test/node) stand on: one
// node of a kind cluster made by internal/kindcluster, reached through the
// API server (client-go) and, for what only the node can do (its kubelet's
// configuration file, systemd, containerd), through its container.
//
// Files by concern: framework.go (connecting, the node under test),
// exec.go (commands in the node), kubelet.go (kubelet configuration and
// restarts), observe.go (what the kubelet observes: the Summary API),
// metrics.go (the kubelet's eviction counters), pods.go (test pods and
// namespaces), images.go (the workload image and image pruning),
// events.go, conditions.go, dump.go (what a failed test leaves for
// diagnosis).
package framework
