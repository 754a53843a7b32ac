// A stand-in for sigs.k8s.io/iptables-wrappers, written here: the Go module
// proxy refuses that module (403 for v1.0.0's zip and for its version list),
// and upstream's v1.38 kubelet imports its pkg/iptables. See README.md.
module sigs.k8s.io/iptables-wrappers

go 1.24
