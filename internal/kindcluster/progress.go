package kindcluster

import (
	"fmt"
	"io"
	"time"
)

// progress prints the steps of a long operation, the way the scripts do:
// "==> what" when a step starts and "    what: done in N s" when it ends.
type progress struct {
	out io.Writer
}

// step runs fn as a named step and reports its duration or its error.
func (p progress) step(name string, fn func() error) error {
	fmt.Fprintf(p.out, "==> %s\n", name)
	start := time.Now()
	if err := fn(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	fmt.Fprintf(p.out, "    %s: done in %s\n", name, time.Since(start).Round(100*time.Millisecond))
	return nil
}

// note prints a detail line under the current step.
func (p progress) note(format string, args ...any) {
	fmt.Fprintf(p.out, "    "+format+"\n", args...)
}
