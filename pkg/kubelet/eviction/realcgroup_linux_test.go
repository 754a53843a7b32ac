//evictkit:file notifier
//go:build linux

package eviction

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/opencontainers/cgroups"
	"golang.org/x/sys/unix"
)

// hostLane is the cgroup hierarchy this host runs: "v1" or "v2".
func hostLane() string {
	if cgroups.IsCgroup2UnifiedMode() {
		return "v2"
	}
	return "v1"
}

// testCgroup is a memory cgroup a test made and removes at cleanup.
type testCgroup struct {
	// dir is its directory, mount the hierarchy's root it is under.
	dir, mount string
	v2         bool
}

// newTestCgroup makes a memory cgroup under the hierarchy's root, on
// cgroup v1 or v2 as lane says ("" for whichever the host runs).
func newTestCgroup(t *testing.T, lane string) *testCgroup {
	t.Helper()
	if lane != "" && lane != hostLane() {
		cannotRun(t, lane, "a memory cgroup %s", lane)
	}
	if os.Geteuid() != 0 {
		cannotRun(t, lane, "creating a memory cgroup needs root")
	}
	cg := &testCgroup{v2: cgroups.IsCgroup2UnifiedMode()}
	if cg.v2 {
		cg.mount = "/sys/fs/cgroup"
		controllers, err := os.ReadFile(filepath.Join(cg.mount, "cgroup.subtree_control"))
		if err != nil || !hasWord(string(controllers), "memory") {
			cannotRun(t, lane, "the memory controller is not enabled for children of %s (%q, %v)", cg.mount, strings.TrimSpace(string(controllers)), err)
		}
	} else {
		mount, err := cgroups.FindCgroupMountpoint("", "memory")
		if err != nil {
			cannotRun(t, lane, "no cgroup v1 memory hierarchy: %v", err)
		}
		cg.mount = mount
	}
	var suffix [4]byte
	_, _ = rand.Read(suffix[:])
	cg.dir = filepath.Join(cg.mount, "eviction-test-"+strconv.Itoa(os.Getpid())+"-"+hex.EncodeToString(suffix[:]))
	if err := os.Mkdir(cg.dir, 0o755); err != nil {
		if errors.Is(err, os.ErrPermission) || errors.Is(err, unix.EROFS) {
			cannotRun(t, lane, "memory cgroup hierarchy at %s is not writable: %v", cg.mount, err)
		}
		t.Fatalf("creating test cgroup: %v", err)
	}
	t.Cleanup(func() { removeCgroupTree(t, cg.dir) })
	return cg
}

// hasWord reports whether a space-separated list contains w.
func hasWord(list, w string) bool {
	for _, f := range strings.Fields(list) {
		if f == w {
			return true
		}
	}
	return false
}

// removeCgroupTree removes a cgroup and its children, deepest first.
// Right after its last task exits, a cgroup can be busy for a moment.
func removeCgroupTree(t *testing.T, dir string) {
	var dirs []string
	_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, path)
		}
		return nil
	})
	for i := len(dirs) - 1; i >= 0; i-- {
		var err error
		for range 50 {
			if err = unix.Rmdir(dirs[i]); err == nil || errors.Is(err, unix.ENOENT) {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if err != nil && !errors.Is(err, unix.ENOENT) {
			t.Errorf("removing test cgroup %s: %v", dirs[i], err)
		}
	}
}

// child makes a child cgroup rel (slash-separated, parents made as
// needed); on v2 each parent passes the memory controller down.
func (cg *testCgroup) child(t *testing.T, rel string) string {
	t.Helper()
	dir := cg.dir
	for _, part := range strings.Split(rel, "/") {
		if cg.v2 {
			cg.write(t, dir, "cgroup.subtree_control", "+memory")
		}
		dir = filepath.Join(dir, part)
		if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			t.Fatalf("creating cgroup %s: %v", dir, err)
		}
	}
	return dir
}

func (cg *testCgroup) write(t *testing.T, dir, file, value string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, file), []byte(value), 0); err != nil {
		t.Fatalf("writing %q to %s: %v", value, filepath.Join(dir, file), err)
	}
}

// limit sets the cgroup's hard memory limit.
func (cg *testCgroup) limit(t *testing.T, bytes int64) {
	t.Helper()
	file := "memory.limit_in_bytes"
	if cg.v2 {
		file = "memory.max"
	}
	cg.write(t, cg.dir, file, strconv.FormatInt(bytes, 10))
}

// usage is the memory the kernel charges to dir.
func (cg *testCgroup) usage(t *testing.T, dir string) int64 {
	t.Helper()
	file := "memory.usage_in_bytes"
	if cg.v2 {
		file = "memory.current"
	}
	return readCgroupInt(t, filepath.Join(dir, file))
}

func readCgroupInt(t *testing.T, path string) int64 {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	v, err := strconv.ParseInt(strings.TrimSpace(string(raw)), 10, 64)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return v
}

// cgroupStat reads one field of a memory.stat file.
func cgroupStat(t *testing.T, dir, key string) int64 {
	t.Helper()
	return cgroupKeyed(t, dir, "memory.stat", key)
}

// cgroupKeyed reads one "<key> <value>" line of a cgroup file
// (memory.stat, memory.events).
func cgroupKeyed(t *testing.T, dir, file, key string) int64 {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if k, v, ok := strings.Cut(line, " "); ok && k == key {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatalf("%s/%s %s: %v", dir, file, key, err)
			}
			return n
		}
	}
	t.Fatalf("%s/%s has no %s", dir, file, key)
	return 0
}

// childProcess is a helper process run in a cgroup.
type childProcess struct {
	cmd *exec.Cmd
	// ready is closed when the child said "ready"; exited when it ended.
	ready, exited chan struct{}
}

// start runs the helper process role inside dir (with env added): it
// moves the child in, tells it to go, and returns. The child is killed and
// reaped at cleanup, which must come before the cgroup's removal (register
// the cgroup first).
func startChild(t *testing.T, dir, role string, env ...string) *childProcess {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(append(os.Environ(), childRoleEnv+"="+role), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", role, err)
	}
	c := &childProcess{cmd: cmd, ready: make(chan struct{}), exited: make(chan struct{})}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = stdin.Close()
		<-c.exited
		if t.Failed() && stderr.Len() > 0 {
			t.Logf("child %s stderr:\n%s", role, stderr.String())
		}
	})
	procs := filepath.Join(dir, "cgroup.procs")
	if err := os.WriteFile(procs, []byte(strconv.Itoa(cmd.Process.Pid)), 0); err != nil {
		t.Fatalf("moving the child into %s: %v", procs, err)
	}
	go func() {
		r := bufio.NewReader(stdout)
		if line, _ := r.ReadString('\n'); strings.TrimSpace(line) == "ready" {
			close(c.ready)
		}
		_, _ = io.Copy(io.Discard, r)
		_ = cmd.Wait()
		close(c.exited)
	}()
	if _, err := io.WriteString(stdin, "go\n"); err != nil {
		t.Fatalf("releasing the child: %v", err)
	}
	return c
}

// waitReady waits for the child's "ready" (or its end) for at most within.
func (c *childProcess) waitReady(t *testing.T, within time.Duration) {
	t.Helper()
	select {
	case <-c.ready:
	case <-c.exited:
		t.Fatalf("the child ended before it was ready: %v", c.cmd.ProcessState)
	case <-time.After(within):
		t.Fatalf("the child was not ready within %s", within)
	}
}

// childWaitForGo blocks a helper process until the test says go; it exits
// if stdin closes first. The returned channel closes when stdin closes.
func childWaitForGo() <-chan struct{} {
	in := bufio.NewReader(os.Stdin)
	if _, err := in.ReadString('\n'); err != nil {
		os.Exit(2)
	}
	done := make(chan struct{})
	go func() { _, _ = io.Copy(io.Discard, in); close(done) }()
	return done
}

// The memory hog: touches EVICTION_TEST_HOG_BYTES of anonymous memory (64 MiB
// by default), says ready and keeps it until stdin closes.
const hogBytesEnv = "EVICTION_TEST_HOG_BYTES"

func init() {
	childRoles["memory-hog"] = func() {
		done := childWaitForGo()
		n := int64(64 << 20)
		if v, err := strconv.ParseInt(os.Getenv(hogBytesEnv), 10, 64); err == nil {
			n = v
		}
		hog := make([]byte, n)
		for i := 0; i < len(hog); i += os.Getpagesize() {
			hog[i] = 1
		}
		os.Stdout.WriteString("ready\n")
		<-done
		hog[0]++
	}
}
