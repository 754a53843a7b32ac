package e2ereport

import (
	"fmt"
	"os"
	"regexp"
	"strings"
)

// RuntimeFailure is a test pod that never ran because the container
// runtime could not create its container, with the runtime's error as the
// kubelet reported it.
type RuntimeFailure struct {
	Pod, Error string
}

// podFailedPhase is the message of upstream's pod client when a pod it
// waits to start ends in phase Failed instead.
var podFailedPhase = regexp.MustCompile(`The phase of Pod (\S+) is Failed which is unexpected`)

// runtimeCreateFailed is the kubelet's Warning event for a container that
// containerd (runc) failed to create, before the container ever started.
var runtimeCreateFailed = regexp.MustCompile(`object="[^"/]*/([^"]+)" .*type="Warning" reason="Failed" message="(Error: failed to create containerd task: [^"]*OCI runtime create failed[^"]*)"`)

// RuntimeCreateFailures tells whether a failed pass of upstream's node e2e
// suite failed only because the container runtime could not create a test
// pod's container: every failed spec failed waiting for a pod that ended
// Failed, and the kubelet's log (kubeletLog) has the runtime's create
// error for each such pod. It returns those pods and errors, or an error
// saying why the pass's failure is not (only) the runtime's.
func RuntimeCreateFailures(junitPath, kubeletLogPath string) ([]RuntimeFailure, error) {
	suites, err := loadJUnit(junitPath)
	if err != nil {
		return nil, err
	}
	log, err := os.ReadFile(kubeletLogPath)
	if err != nil {
		return nil, err
	}
	created := map[string]string{}
	for _, line := range strings.Split(string(log), "\n") {
		if m := runtimeCreateFailed.FindStringSubmatch(line); m != nil {
			created[m[1]] = m[2]
		}
	}
	var failures []RuntimeFailure
	failed := 0
	for _, s := range suites.TestSuites {
		for _, c := range s.TestCases {
			switch c.Status {
			case "passed", "skipped":
				continue
			}
			failed++
			msg := junitFailure(c)
			m := podFailedPhase.FindStringSubmatch(msg)
			if m == nil {
				return nil, fmt.Errorf("%s failed otherwise: %s", c.Name, oneLine(msg, maxMessage))
			}
			runtimeErr, ok := created[m[1]]
			if !ok {
				return nil, fmt.Errorf("%s: pod %s ended Failed, and the kubelet's log has no container runtime create failure for it", c.Name, m[1])
			}
			failures = append(failures, RuntimeFailure{Pod: m[1], Error: runtimeErr})
		}
	}
	if failed == 0 {
		return nil, fmt.Errorf("%s: no spec failed", junitPath)
	}
	return failures, nil
}
