// Package iptables is evictkit's stand-in for sigs.k8s.io/iptables-wrappers'
// package of the same name: the client the v1.38 kubelet uses to keep its
// hint, firewall and canary chains (see the module's README.md).
package iptables

import (
	"context"
	"time"
)

// Table is an iptables table.
type Table string

// The tables the kubelet writes to.
const (
	TableNAT    Table = "nat"
	TableFilter Table = "filter"
	TableMangle Table = "mangle"
)

// Chain is an iptables chain.
type Chain string

// Built-in chains.
const (
	ChainPrerouting  Chain = "PREROUTING"
	ChainInput       Chain = "INPUT"
	ChainForward     Chain = "FORWARD"
	ChainOutput      Chain = "OUTPUT"
	ChainPostrouting Chain = "POSTROUTING"
)

// RulePosition is where EnsureRule puts a rule it adds: first or last.
type RulePosition string

// The positions, as iptables' own flags.
const (
	Prepend RulePosition = "-I"
	Append  RulePosition = "-A"
)

// Protocol is the IP family a client works on.
type Protocol string

// The two families.
const (
	ProtocolIPv4 Protocol = "IPv4"
	ProtocolIPv6 Protocol = "IPv6"
)

// Mode says which iptables binaries a client runs.
type Mode string

// UseInstalledMode runs the iptables and ip6tables the node has installed
// (whatever backend they use). It is the only mode of this stand-in.
const UseInstalledMode Mode = "installed"

// Interface is what the kubelet calls on a client.
type Interface interface {
	// Protocol is the client's IP family.
	Protocol() Protocol
	// IsIPv6 says whether the client works on IPv6.
	IsIPv6() bool
	// EnsureChain creates the chain unless it exists; it says whether it
	// existed.
	EnsureChain(ctx context.Context, table Table, chain Chain) (bool, error)
	// EnsureRule adds the rule at position unless the chain has it; it says
	// whether it was there.
	EnsureRule(ctx context.Context, position RulePosition, table Table, chain Chain, args ...string) (bool, error)
	// Monitor keeps canary chains in tables and calls reload when one is
	// gone (someone flushed the tables), checking every interval, until ctx
	// ends.
	Monitor(ctx context.Context, canary Chain, tables []Table, reload func(), interval time.Duration)
}

// NewBestEffort gives a client for each IP family whose iptables binary
// works on this node; none when neither does.
func NewBestEffort(ctx context.Context, mode Mode) map[Protocol]Interface {
	return newBestEffort(ctx, mode, execCommand)
}

func newBestEffort(ctx context.Context, _ Mode, run commandFunc) map[Protocol]Interface {
	clients := map[Protocol]Interface{}
	for _, p := range []Protocol{ProtocolIPv4, ProtocolIPv6} {
		c := &client{protocol: p, run: run}
		if c.works(ctx) {
			clients[p] = c
		}
	}
	return clients
}
