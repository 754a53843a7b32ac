package vmnode

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The remote command ssh sends must give the remote shell exactly the
// argument vector asked for. The oracle is a real POSIX shell here.
func TestRemoteCommandKeepsEveryArgument(t *testing.T) {
	argv := []string{"printf", `%s\n`, "plain", "two words", "it's", `"double"`, "$HOME", "`id`", "a;b", "", "tab\there", "new\nline", `back\slash`, "*"}
	n := &Node{name: "vm", ip: "192.0.2.1", key: "/k"}
	args := sshArgs(n, nil, argv)
	if args[len(args)-2] != "--" {
		t.Fatalf("ssh's command line does not end the options before the remote command: %q", args)
	}
	out, err := exec.Command("sh", "-c", args[len(args)-1]).Output()
	if err != nil {
		t.Fatalf("sh -c %q: %v", args[len(args)-1], err)
	}
	want := strings.Join(argv[2:], "\n") + "\n"
	if string(out) != want {
		t.Errorf("the shell got other arguments:\n got %q\nwant %q", out, want)
	}
}

func TestRemoteCommandSetsTheEnvironment(t *testing.T) {
	n := &Node{name: "vm", ip: "192.0.2.1", key: "/k"}
	args := sshArgs(n, []string{"A=one two", "B=it's"}, []string{"sh", "-c", `printf '%s|%s' "$A" "$B"`})
	out, err := exec.Command("sh", "-c", args[len(args)-1]).Output()
	if err != nil {
		t.Fatalf("sh -c %q: %v", args[len(args)-1], err)
	}
	if string(out) != "one two|it's" {
		t.Errorf("got %q", out)
	}
	if !slices.Contains(args, "root@192.0.2.1") || !slices.Contains(args, "/k") {
		t.Errorf("ssh does not go to root@192.0.2.1 with key /k: %q", args)
	}
}

func TestLookup(t *testing.T) {
	write := func(t *testing.T, dir, name, pid string) {
		t.Helper()
		run := filepath.Join(dir, "vm-node", name)
		if err := os.MkdirAll(run, 0o755); err != nil {
			t.Fatal(err)
		}
		for f, s := range map[string]string{"qemu.pid": pid + "\n", "ip": "192.0.2.7\n", "cluster": "c1\n"} {
			if err := os.WriteFile(filepath.Join(run, f), []byte(s), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "vm-node"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "vm-node", "id_ed25519"), nil, 0o600); err != nil {
		t.Fatal(err)
	}

	if _, ok, err := Lookup(dir, "absent"); ok || err != nil {
		t.Errorf("a VM never started: ok %v, err %v; want not found, no error", ok, err)
	}

	write(t, dir, "live", strconv.Itoa(os.Getpid()))
	n, ok, err := Lookup(dir, "live")
	if err != nil || !ok {
		t.Fatalf("a running VM: ok %v, err %v", ok, err)
	}
	if ip, _, _ := n.IP(); ip != "192.0.2.7" || n.String() != "live" {
		t.Errorf("got node %s at %s", n.String(), ip)
	}

	// A PID that cannot be running: above the kernel's maximum.
	write(t, dir, "gone", "99999999")
	if _, ok, err := Lookup(dir, "gone"); ok || err != nil {
		t.Errorf("a VM whose QEMU has ended: ok %v, err %v; want not found, no error", ok, err)
	}

	write(t, dir, "live-b", strconv.Itoa(os.Getpid()))
	if err := os.WriteFile(filepath.Join(dir, "vm-node", "live-b", "cluster"), []byte("c2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	list, err := List(dir, "c1")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, n := range list {
		names = append(names, n.String())
	}
	if !slices.Equal(names, []string{"live"}) {
		t.Errorf("running VM nodes of cluster c1: %v, want [live] (gone has ended, live-b is c2's)", names)
	}

	write(t, dir, "garbled", "not-a-pid")
	if _, _, err := Lookup(dir, "garbled"); err == nil || !strings.Contains(err.Error(), "qemu.pid") {
		t.Errorf("a garbled PID file: err %v, want one naming qemu.pid", err)
	}
}
