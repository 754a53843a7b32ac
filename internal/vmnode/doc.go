// Package vmnode reaches the cgroup v2 VM node that scripts/vm-node.sh runs
// and joins to a kind cluster: a kind nodes.Node whose commands run over
// ssh, so the cluster tool and the suites drive it the way they drive a
// kind node's container (docker exec).
package vmnode
