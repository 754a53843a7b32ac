// Command coredns is CoreDNS, built with only the plugins that kubeadm's
// Corefile for the cluster DNS uses (errors, health, ready, kubernetes,
// prometheus, forward, cache, loop, reload, loadbalance) and log. The full
// build links every plugin, including the cloud DNS providers' SDKs, and
// takes several times longer to compile from a cold cache; the plugins that
// are here are CoreDNS's own, unchanged. scripts/build-components.sh builds
// it against the CoreDNS release pinned in scripts/lib/versions.sh and
// scripts/node-image.sh packages it as registry.k8s.io/coredns/coredns.
package main

import (
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/forward"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/loop"
	_ "github.com/coredns/coredns/plugin/metrics"
	_ "github.com/coredns/coredns/plugin/ready"
	_ "github.com/coredns/coredns/plugin/reload"
)

func main() {
	coremain.Run()
}
