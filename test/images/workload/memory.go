package main

import (
	"flag"
	"fmt"
	"runtime"
	"syscall"
	"time"
)

// hogMemory maps anonymous memory and writes to every page of it, so all of
// it is resident and counts in the container's working set.
func hogMemory(args []string) error {
	fs := flag.NewFlagSet("memory", flag.ContinueOnError)
	size := quantity(fs, "size", "0", "memory to take (required)")
	rate := quantity(fs, "rate", "50Mi", "bytes per second")
	freeze := fs.Bool("freeze-on-term", false, "stop growing at the first SIGTERM (hold what is taken): a kernel OOM kill then means the kill came too late")
	after := fs.String("after", "", "start growing only once this file exists (a test creates it when its moment comes)")
	pause := pauseFlags(fs)
	threads := fs.Int("threads", 1, "threads that touch memory at once, each taking an equal share of -size at an equal share of -rate")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *threads < 1 || (*threads > 1 && pause.at.bytes() > 0) {
		return fmt.Errorf("-threads %d: want 1 or more, and 1 with -pause-at", *threads)
	}
	if err := pause.check(size); err != nil {
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
	var err error
	take := func(n int64) (int64, error) {
		pause.wait("memory", taken.Load(), mib)
		mem, err := syscall.Mmap(-1, 0, int(n), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
		if err != nil {
			return 0, fmt.Errorf("mmap %d bytes: %w", n, err)
		}
		for off := int64(0); off < n; off += page {
			mem[off] = 1
		}
		return n, nil
	}
	if *threads == 1 {
		err = grow("memory", size.bytes(), rate.bytes(), chunk, mib, take)
	} else {
		err = growInThreads(*threads, size.bytes(), rate.bytes(), chunk, take)
	}
	if err != nil {
		return err
	}
	hold()
	return nil
}

// growInThreads grows memory in n threads at once, each an equal share of
// total at an equal share of rate (the last takes the remainder), and
// returns the first error. Each goroutine keeps an OS thread of its own,
// so page faults in one do not hold up the others.
func growInThreads(n int, total, rate, step int64, take func(int64) (int64, error)) error {
	start := time.Now()
	errs := make(chan error, n)
	share := total / int64(n)
	for i := range n {
		part := share
		if i == n-1 {
			part = total - share*int64(n-1)
		}
		go func() {
			runtime.LockOSThread()
			errs <- grow(fmt.Sprintf("memory[%d]", i), part, max(rate/int64(n), 1), step, mib, take)
		}()
	}
	var first error
	for range n {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	if d := time.Since(start); first == nil && d > 0 {
		fmt.Printf("memory: %s in %d threads in %s (%s/s)\n", mib(taken.Load()), n, d.Round(time.Millisecond), mib(int64(float64(taken.Load())/d.Seconds())))
	}
	return first
}
