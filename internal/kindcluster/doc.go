// Package kindcluster brings evictkit's kind clusters up and down offline,
// through kind's Go API: it reads kind-config.yaml, gives nodes that ask for
// it small dedicated filesystems (loop-device images on the host, mounted
// into the node), creates the cluster on the project's Docker engine with
// the locally built node image, waits for every node to be Ready, proves pod
// networking, switches a node between the patched and the upstream kubelet,
// and exports logs. Every step prints what it does and how long it took.
//
// The node image and the engine are built by scripts/ (node-image.sh,
// engine.sh); this package only uses them.
package kindcluster
