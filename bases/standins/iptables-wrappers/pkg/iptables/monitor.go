package iptables

import (
	"context"
	"time"
)

// Monitor creates the canary chain in every table, then checks at each
// interval that they are all still there. When one is gone (something
// flushed or restarted the firewall), it calls reload and starts over. A
// check that fails (iptables itself failing) is retried at the next
// interval, never taken for a flush.
func (c *client) Monitor(ctx context.Context, canary Chain, tables []Table, reload func(), interval time.Duration) {
	for {
		for _, t := range tables {
			// A failure here shows at the next check as a missing canary.
			_, _ = c.EnsureChain(ctx, t, canary)
		}
		if !c.waitForFlush(ctx, canary, tables, interval) {
			return
		}
		reload()
	}
}

// waitForFlush waits until a canary is gone (true) or ctx ends (false).
func (c *client) waitForFlush(ctx context.Context, canary Chain, tables []Table, interval time.Duration) bool {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
		}
		for _, t := range tables {
			if exists, err := c.chainExists(ctx, t, canary); err == nil && !exists {
				return true
			}
		}
	}
}
