package nodee2e

import (
	. "github.com/onsi/ginkgo/v2"

	"github.com/evictkit/evictkit/internal/e2ereport"
)

// control is set for a negative-control run (make test-node-controls):
// the Alpha specs run on a kubelet without the behaviour they test
// (kubelet-upstream, their feature gates left out of the configuration),
// and each must fail, for the reason its feature is about. A control that
// passes shows a spec that does not test its feature.
var control bool

// expectControlFailure states, at the start of an Alpha spec, the failure
// its negative control must show: a regular expression its failure
// message must match. Outside a control run it does nothing.
func expectControlFailure(pattern string) {
	if control {
		AddReportEntry(e2ereport.ControlEntry, pattern)
	}
}
