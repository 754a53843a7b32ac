// Package nodee2e holds the node e2e eviction suites: Ginkgo specs that
// drive one node of the kind cluster into real memory, disk, inode and PID
// pressure and check what its kubelet's eviction manager does about it.
// Run them with make test-node (see the README); the specs are in the
// _test.go files, the plumbing in internal/nodeharness
// and its per-suite setup in internal/nodeharness/suite.
package nodee2e
