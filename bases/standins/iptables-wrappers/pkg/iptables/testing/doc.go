// Package testing exists so that go mod tidy finds every package of
// sigs.k8s.io/iptables-wrappers that upstream's tree imports (kube-proxy's
// tests import it). The stand-in gives no fake: those tests are not built
// with it. See the module's README.md.
package testing
