package main

import (
	"flag"
	"fmt"
	"syscall"
)

// hogMemory maps anonymous memory and writes to every page of it, so all of
// it is resident and counts in the container's working set.
func hogMemory(args []string) error {
	fs := flag.NewFlagSet("memory", flag.ContinueOnError)
	size := quantity(fs, "size", "0", "memory to take (required)")
	rate := quantity(fs, "rate", "50Mi", "bytes per second")
	freeze := fs.Bool("freeze-on-term", false, "stop growing at the first SIGTERM (hold what is taken): a kernel OOM kill then means the kill came too late")
	after := fs.String("after", "", "start growing only once this file exists (a test creates it when its moment comes)")
	pauseAt := quantity(fs, "pause-at", "0", "stop growing at this size until the -resume file exists (0: no pause)")
	resume := fs.String("resume", "", "the file that ends the pause at -pause-at")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if (pauseAt.bytes() > 0) != (*resume != "") {
		return fmt.Errorf("-pause-at and -resume go together (got -pause-at %s, -resume %q)", pauseAt.String(), *resume)
	}
	if pauseAt.bytes() >= size.bytes() && pauseAt.bytes() > 0 {
		return fmt.Errorf("-pause-at %s must be below -size %s", pauseAt.String(), size.String())
	}
	if *after != "" {
		waitForFile(*after)
	}
	if *freeze {
		freezeOnTerm.Store(true)
	}
	const chunk = 4 << 20
	page := int64(syscall.Getpagesize())
	paused := pauseAt.bytes() == 0
	err := grow("memory", size.bytes(), rate.bytes(), chunk, mib, func(n int64) (int64, error) {
		if !paused && taken.Load() >= pauseAt.bytes() {
			fmt.Printf("memory: paused at %s\n", mib(taken.Load()))
			waitForFile(*resume)
			paused = true
		}
		mem, err := syscall.Mmap(-1, 0, int(n), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
		if err != nil {
			return 0, fmt.Errorf("mmap %d bytes: %w", n, err)
		}
		for off := int64(0); off < n; off += page {
			mem[off] = 1
		}
		return n, nil
	})
	if err != nil {
		return err
	}
	hold()
	return nil
}
