// Package nodeharness is what the node and cluster e2e suites (test/node,
// test/e2e) and the side-by-side bench (internal/benche2e) stand on: one
// node of a kind cluster made by internal/kindcluster, reached through the
// API server (client-go) and, for what only the node can do (its kubelet's
// configuration file, systemd, containerd), through its container.
//
// Files by concern: connect.go (connecting, the node under test),
// exec.go (commands in the node), kubelet.go (kubelet configuration and
// restarts), observe.go (what the kubelet observes: the Summary API),
// metrics.go (the kubelet's eviction counters), pods.go and staticpods.go
// (test pods and namespaces), workload.go (the workload's hogs as
// container args), images.go (the workload image and image pruning),
// logs.go (container logs and the kubelet's journal), events.go,
// evicted.go, evictiontimes.go, conditions.go (what the kubelet did), and
// dump.go (what a failed test leaves for diagnosis). The suites' Ginkgo
// side is in ./suite.
package nodeharness
