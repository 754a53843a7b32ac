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
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *after != "" {
		waitForFile(*after)
	}
	if *freeze {
		freezeOnTerm.Store(true)
	}
	const chunk = 4 << 20
	page := int64(syscall.Getpagesize())
	err := grow("memory", size.bytes(), rate.bytes(), chunk, mib, func(n int64) (int64, error) {
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
