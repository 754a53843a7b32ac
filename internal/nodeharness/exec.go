package nodeharness

import (
	"context"
	"fmt"
	"io"
	"strings"
)

// Exec runs a command in the node's container and returns its standard
// output; a failure carries what the command printed.
func (f *Framework) Exec(ctx context.Context, args ...string) (string, error) {
	return f.ExecInput(ctx, nil, args...)
}

// ExecInput is Exec with stdin fed to the command.
func (f *Framework) ExecInput(ctx context.Context, stdin io.Reader, args ...string) (string, error) {
	var stdout, stderr strings.Builder
	cmd := f.node.CommandContext(ctx, args[0], args[1:]...).SetStdout(&stdout).SetStderr(&stderr)
	if stdin != nil {
		cmd.SetStdin(stdin)
	}
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("node %s: %s: %w: %s", f.Node, strings.Join(args, " "), err,
			strings.TrimSpace(stderr.String()+" "+stdout.String()))
	}
	return stdout.String(), nil
}
