package iptables

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeTables is a tiny model of iptables' chains and rules, written for
// these tests from iptables' documented behaviour: -S of a missing chain,
// -N of an existing one and -C of a missing rule exit 1.
type fakeTables struct {
	mu     sync.Mutex
	chains map[string][]string // "binary table chain" -> rules
	calls  []string
	broken bool // every command exits 4 (e.g. no kernel support)
}

func newFake() *fakeTables {
	f := &fakeTables{chains: map[string][]string{}}
	for _, b := range []string{"iptables", "ip6tables"} {
		for _, t := range []string{"filter", "nat", "mangle"} {
			for _, c := range []string{"INPUT", "OUTPUT"} {
				f.chains[b+" "+t+" "+c] = nil
			}
		}
	}
	return f
}

func (f *fakeTables) run(_ context.Context, name string, args ...string) ([]byte, int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, name+" "+strings.Join(args, " "))
	if f.broken {
		return []byte("iptables: can't initialize"), 4, nil
	}
	if len(args) < 5 || args[0] != "-w" || args[1] != "-t" {
		return nil, 2, nil
	}
	key := name + " " + args[2] + " " + args[4]
	rules, exists := f.chains[key]
	rule := strings.Join(args[5:], " ")
	switch args[3] {
	case "-S":
		if exists {
			return nil, 0, nil
		}
	case "-N":
		if !exists {
			f.chains[key] = nil
			return nil, 0, nil
		}
	case "-C":
		if exists && slices.Contains(rules, rule) {
			return nil, 0, nil
		}
	case "-I":
		if exists {
			f.chains[key] = append([]string{rule}, rules...)
			return nil, 0, nil
		}
	case "-A":
		if exists {
			f.chains[key] = append(rules, rule)
			return nil, 0, nil
		}
	default:
		return nil, 2, nil
	}
	return nil, 1, nil
}

func (f *fakeTables) has(key string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ok := f.chains[key]
	return ok
}

func TestEnsureChain(t *testing.T) {
	f := newFake()
	c := &client{protocol: ProtocolIPv4, run: f.run}
	ctx := context.Background()
	existed, err := c.EnsureChain(ctx, TableMangle, "KUBE-IPTABLES-HINT")
	if err != nil || existed {
		t.Fatalf("first EnsureChain = %v, %v; want false, nil", existed, err)
	}
	if !f.has("iptables mangle KUBE-IPTABLES-HINT") || f.has("ip6tables mangle KUBE-IPTABLES-HINT") {
		t.Fatalf("chain not created in iptables' mangle table only: %v", f.chains)
	}
	existed, err = c.EnsureChain(ctx, TableMangle, "KUBE-IPTABLES-HINT")
	if err != nil || !existed {
		t.Fatalf("second EnsureChain = %v, %v; want true, nil", existed, err)
	}
	if n := strings.Count(strings.Join(f.calls, "\n"), " -N "); n != 1 {
		t.Errorf("-N ran %d times, want once: %v", n, f.calls)
	}
}

func TestEnsureRule(t *testing.T) {
	f := newFake()
	c := &client{protocol: ProtocolIPv6, run: f.run}
	ctx := context.Background()
	for _, step := range []struct {
		pos  RulePosition
		rule string
		want bool
	}{
		{Append, "-j A", false},
		{Prepend, "-j B", false},
		{Prepend, "-j B", true},
		{Append, "-j A", true},
	} {
		existed, err := c.EnsureRule(ctx, step.pos, TableFilter, ChainInput, strings.Fields(step.rule)...)
		if err != nil || existed != step.want {
			t.Fatalf("EnsureRule(%s %s) = %v, %v; want %v, nil", step.pos, step.rule, existed, err, step.want)
		}
	}
	if got := f.chains["ip6tables filter INPUT"]; !slices.Equal(got, []string{"-j B", "-j A"}) {
		t.Errorf("ip6tables filter INPUT = %q, want the prepended rule first", got)
	}
	if _, err := c.EnsureRule(ctx, "-D", TableFilter, ChainInput, "-j", "A"); err == nil {
		t.Error("EnsureRule accepted position -D")
	}
}

func TestErrorsNameTheCommand(t *testing.T) {
	f := newFake()
	f.broken = true
	c := &client{protocol: ProtocolIPv4, run: f.run}
	_, err := c.EnsureChain(context.Background(), TableFilter, "KUBE-FIREWALL")
	if err == nil || !strings.Contains(err.Error(), "iptables -w -t filter -S KUBE-FIREWALL: exit code 4") {
		t.Errorf("err = %v, want one naming the command and its exit code", err)
	}
}

func TestNewBestEffort(t *testing.T) {
	f := newFake()
	clients := newBestEffort(context.Background(), UseInstalledMode, f.run)
	if len(clients) != 2 || !clients[ProtocolIPv6].IsIPv6() || clients[ProtocolIPv4].IsIPv6() {
		t.Errorf("clients = %v, want one per family", clients)
	}
	f.broken = true
	if clients := newBestEffort(context.Background(), UseInstalledMode, f.run); len(clients) != 0 {
		t.Errorf("clients = %v on a node where iptables fails, want none", clients)
	}
}

func TestMonitorReloadsAfterFlush(t *testing.T) {
	f := newFake()
	c := &client{protocol: ProtocolIPv4, run: f.run}
	ctx, cancel := context.WithCancel(context.Background())
	reloads := make(chan struct{}, 10)
	done := make(chan struct{})
	go func() {
		c.Monitor(ctx, "CANARY", []Table{TableMangle, TableNAT}, func() { reloads <- struct{}{} }, time.Millisecond)
		close(done)
	}()
	waitFor(t, func() bool { return f.has("iptables nat CANARY") && f.has("iptables mangle CANARY") })
	select {
	case <-reloads:
		t.Fatal("reload before any flush")
	case <-time.After(50 * time.Millisecond):
	}
	f.mu.Lock()
	delete(f.chains, "iptables nat CANARY")
	f.mu.Unlock()
	select {
	case <-reloads:
	case <-time.After(10 * time.Second):
		t.Fatal("no reload after the nat canary was removed")
	}
	waitFor(t, func() bool { return f.has("iptables nat CANARY") })
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Monitor did not return when its context ended")
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10 s")
		}
		time.Sleep(time.Millisecond)
	}
}
