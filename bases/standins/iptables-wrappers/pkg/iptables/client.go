package iptables

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
)

// commandFunc runs a command and gives its combined output and exit code;
// err is for a command that could not run at all (or was stopped).
type commandFunc func(ctx context.Context, name string, args ...string) (out []byte, code int, err error)

func execCommand(ctx context.Context, name string, args ...string) ([]byte, int, error) {
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() > 0 {
		return out, exit.ExitCode(), nil
	}
	return out, 0, err
}

// iptables exits 1 when the chain or rule asked about is not there; any
// other failure has another code.
const exitNotFound = 1

type client struct {
	protocol Protocol
	run      commandFunc
}

func (c *client) Protocol() Protocol { return c.protocol }

func (c *client) IsIPv6() bool { return c.protocol == ProtocolIPv6 }

func (c *client) binary() string {
	if c.IsIPv6() {
		return "ip6tables"
	}
	return "iptables"
}

// iptables runs the client's binary with -w (wait for the xtables lock) and
// the table; found is false for exit code 1, anything else but 0 is an error.
func (c *client) iptables(ctx context.Context, table Table, args ...string) (found bool, err error) {
	full := append([]string{"-w", "-t", string(table)}, args...)
	out, code, err := c.run(ctx, c.binary(), full...)
	switch {
	case err != nil:
		return false, fmt.Errorf("%s %s: %w", c.binary(), strings.Join(full, " "), err)
	case code == 0:
		return true, nil
	case code == exitNotFound:
		return false, nil
	}
	return false, fmt.Errorf("%s %s: exit code %d: %s", c.binary(), strings.Join(full, " "), code, strings.TrimSpace(string(out)))
}

// works says whether the client's binary can list a table on this node.
func (c *client) works(ctx context.Context) bool {
	ok, err := c.iptables(ctx, TableFilter, "-S", string(ChainInput))
	return ok && err == nil
}

func (c *client) chainExists(ctx context.Context, table Table, chain Chain) (bool, error) {
	return c.iptables(ctx, table, "-S", string(chain))
}

func (c *client) EnsureChain(ctx context.Context, table Table, chain Chain) (bool, error) {
	if exists, err := c.chainExists(ctx, table, chain); err != nil || exists {
		return exists, err
	}
	created, err := c.iptables(ctx, table, "-N", string(chain))
	if err != nil {
		return false, err
	}
	if !created {
		// Someone else created it between the check and -N.
		if exists, err := c.chainExists(ctx, table, chain); err != nil || exists {
			return exists, err
		}
		return false, fmt.Errorf("%s -t %s -N %s failed and the chain does not exist", c.binary(), table, chain)
	}
	return false, nil
}

func (c *client) EnsureRule(ctx context.Context, position RulePosition, table Table, chain Chain, args ...string) (bool, error) {
	if position != Prepend && position != Append {
		return false, fmt.Errorf("rule position %q: want %q or %q", position, Prepend, Append)
	}
	exists, err := c.iptables(ctx, table, append([]string{"-C", string(chain)}, args...)...)
	if err != nil || exists {
		return exists, err
	}
	added, err := c.iptables(ctx, table, append([]string{string(position), string(chain)}, args...)...)
	if err == nil && !added {
		err = fmt.Errorf("%s -t %s %s %s %s failed", c.binary(), table, position, chain, strings.Join(args, " "))
	}
	return false, err
}
