//evictkit:file notifier

package eviction

import (
	"errors"
	"fmt"
	"os"
	"testing"
)

// Tests on the real kernel (memory cgroups, PSI) need root and a cgroup
// hierarchy: v1 on these hosts, v2 in the VM of make test-cgroupv2.
// Elsewhere they skip. Where EVICTION_TEST_REAL_CGROUPS names the hierarchy
// the host runs ("v1" or "v2"), every such test for that hierarchy must
// run: one that cannot fails, saying why. Tests for the other hierarchy
// still skip; they run in the other lane.
const realCgroupsEnv = "EVICTION_TEST_REAL_CGROUPS"

// childRoleEnv makes the test binary act as a helper process instead of
// running tests (see childRoles).
const childRoleEnv = "EVICTION_TEST_CHILD"

// childRoles are the helper processes the real-kernel tests run inside
// their cgroups, by name. Each waits for a line on stdin (sent once it has
// been moved into its cgroup), does its work, says "ready" and goes on
// until stdin closes.
var childRoles = map[string]func(){}

func TestMain(m *testing.M) {
	if role := os.Getenv(childRoleEnv); role != "" {
		run, ok := childRoles[role]
		if !ok {
			fmt.Fprintf(os.Stderr, "%s=%q: no such helper process\n", childRoleEnv, role)
			os.Exit(2)
		}
		run()
		os.Exit(0)
	}
	if lane := os.Getenv(realCgroupsEnv); lane != "" {
		if err := checkLane(lane); err != nil {
			fmt.Fprintf(os.Stderr, "%s=%s: %v\n", realCgroupsEnv, lane, err)
			os.Exit(1)
		}
	}
	os.Exit(m.Run())
}

// checkLane fails unless this host runs the hierarchy lane names.
func checkLane(lane string) error {
	switch host := hostLane(); {
	case lane != "v1" && lane != "v2":
		return errors.New(`want "v1" or "v2"`)
	case lane != host:
		return fmt.Errorf("this host runs cgroup %q", host)
	}
	return nil
}

// cannotRun ends a real-kernel test that cannot run here: a test for the
// other hierarchy (lane "v1" or "v2") skips; one for this host's
// hierarchy (or for either, lane "") fails where EVICTION_TEST_REAL_CGROUPS
// requires it and skips otherwise.
func cannotRun(t *testing.T, lane, format string, args ...any) {
	t.Helper()
	why := fmt.Sprintf(format, args...)
	if lane != "" && lane != hostLane() {
		t.Skipf("needs cgroup %s, this host runs %q (the cgroup %s lane runs it): %s", lane, hostLane(), lane, why)
	}
	if required := os.Getenv(realCgroupsEnv); required != "" {
		t.Fatalf("%s; %s=%s requires this test to run here", why, realCgroupsEnv, required)
	}
	t.Skip(why)
}
