package kindcluster

import (
	"fmt"
	"os/exec"
	"strings"
)

// run runs a host command, returning its output in the error when it fails.
func run(name string, args ...string) error {
	_, err := execOutput(name, args...)
	return err
}

// execOutput runs a host command and returns its standard output; a failure
// names the command and carries what it printed.
func execOutput(name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err,
			strings.TrimSpace(stderr.String()+" "+string(out)))
	}
	return string(out), nil
}
