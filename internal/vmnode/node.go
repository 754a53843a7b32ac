package vmnode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"sigs.k8s.io/kind/pkg/exec"
)

// DefaultStateDir is where scripts/vm-node.sh keeps its VMs unless
// EVICTKIT_STATE_DIR says otherwise.
const DefaultStateDir = "/var/lib/evictkit"

// StateDir is the directory scripts/vm-node.sh uses in this environment.
func StateDir() string {
	if d := os.Getenv("EVICTKIT_STATE_DIR"); d != "" {
		return d
	}
	return DefaultStateDir
}

// Node is a running VM node, reached as root over ssh with the key
// scripts/vm-node.sh made.
type Node struct {
	name string
	ip   string
	key  string
	run  string // the VM's run directory: ip, qemu.pid, console.log
}

// Lookup finds the VM node name under stateDir. ok is false when no VM of
// that name runs; err is for a VM that runs but cannot be reached.
func Lookup(stateDir, name string) (n *Node, ok bool, err error) {
	run := filepath.Join(stateDir, "vm-node", name)
	pid, err := os.ReadFile(filepath.Join(run, "qemu.pid"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	p, err := strconv.Atoi(strings.TrimSpace(string(pid)))
	if err != nil {
		return nil, false, fmt.Errorf("VM node %s: %s holds no PID: %q", name, filepath.Join(run, "qemu.pid"), pid)
	}
	if _, err := os.Stat(filepath.Join("/proc", strconv.Itoa(p))); err != nil {
		return nil, false, nil
	}
	ip, err := os.ReadFile(filepath.Join(run, "ip"))
	if err != nil {
		return nil, false, fmt.Errorf("VM node %s runs (pid %d) but its address is unknown: %w", name, p, err)
	}
	key := filepath.Join(stateDir, "vm-node", "id_ed25519")
	if _, err := os.Stat(key); err != nil {
		return nil, false, fmt.Errorf("VM node %s runs (pid %d) but its ssh key is missing: %w", name, p, err)
	}
	return &Node{name: name, ip: strings.TrimSpace(string(ip)), key: key, run: run}, true, nil
}

// List returns the running VM nodes joined to the kind cluster (by name),
// sorted by name.
func List(stateDir, cluster string) ([]*Node, error) {
	dirs, err := os.ReadDir(filepath.Join(stateDir, "vm-node"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var list []*Node
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		c, err := os.ReadFile(filepath.Join(stateDir, "vm-node", d.Name(), "cluster"))
		if err != nil || strings.TrimSpace(string(c)) != cluster {
			continue
		}
		n, ok, err := Lookup(stateDir, d.Name())
		if err != nil {
			return nil, err
		}
		if ok {
			list = append(list, n)
		}
	}
	return list, nil
}

// String is the node's name.
func (n *Node) String() string { return n.name }

// Role is worker: a VM node never runs the control plane.
func (n *Node) Role() (string, error) { return "worker", nil }

// IP is the VM's address on the kind network (IPv4 only).
func (n *Node) IP() (string, string, error) { return n.ip, "", nil }

// SerialLogs copies the VM's console.
func (n *Node) SerialLogs(w io.Writer) error {
	f, err := os.Open(filepath.Join(n.run, "console.log"))
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(w, f)
	return err
}

// Command runs a command on the VM (see CommandContext).
func (n *Node) Command(name string, args ...string) exec.Cmd {
	return n.CommandContext(context.Background(), name, args...)
}

// CommandContext runs name with args on the VM as root, with the exact
// argument vector: ssh hands the remote shell one string, so every
// argument is quoted for it.
func (n *Node) CommandContext(ctx context.Context, name string, args ...string) exec.Cmd {
	return &cmd{node: n, ctx: ctx, argv: append([]string{name}, args...)}
}

// cmd is a command on the VM; environment variables go to env(1) there.
type cmd struct {
	node           *Node
	ctx            context.Context
	argv           []string
	env            []string
	stdin          io.Reader
	stdout, stderr io.Writer
}

func (c *cmd) SetEnv(env ...string) exec.Cmd  { c.env = env; return c }
func (c *cmd) SetStdin(r io.Reader) exec.Cmd  { c.stdin = r; return c }
func (c *cmd) SetStdout(w io.Writer) exec.Cmd { c.stdout = w; return c }
func (c *cmd) SetStderr(w io.Writer) exec.Cmd { c.stderr = w; return c }
func (c *cmd) Run() error                     { return c.local().Run() }
func (c *cmd) sshArgs() []string              { return sshArgs(c.node, c.env, c.argv) }
func (c *cmd) local() exec.Cmd {
	l := exec.CommandContext(c.ctx, "ssh", sshArgs(c.node, c.env, c.argv)...)
	if c.stdin != nil {
		l.SetStdin(c.stdin)
	}
	if c.stdout != nil {
		l.SetStdout(c.stdout)
	}
	if c.stderr != nil {
		l.SetStderr(c.stderr)
	}
	return l
}

// sshArgs is ssh's command line for argv (with env) on the node.
func sshArgs(n *Node, env, argv []string) []string {
	args := []string{
		"-i", n.key,
		"-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR",
		"-o", "ConnectTimeout=10", "-o", "BatchMode=yes",
		"root@" + n.ip, "--",
	}
	remote := make([]string, 0, len(env)+len(argv)+1)
	if len(env) > 0 {
		remote = append(remote, "env")
		for _, e := range env {
			remote = append(remote, quote(e))
		}
	}
	for _, a := range argv {
		remote = append(remote, quote(a))
	}
	return append(args, strings.Join(remote, " "))
}

// quote makes s one word for a POSIX shell, whatever it holds.
func quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
