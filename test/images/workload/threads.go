package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"syscall"
)

// hogThreads starts OS threads that each sleep in a blocking system call.
// The kubelet's pid.available is the kernel's task limit minus the tasks
// that exist, threads included, so threads raise PID pressure as processes
// do, at a fraction of the memory. With -procs P the threads are spread
// over P processes (this one and P-1 children), so the pod also has many
// processes, which is what the kubelet ranks PID hogs by.
func hogThreads(args []string) error {
	fs := flag.NewFlagSet("threads", flag.ContinueOnError)
	n := fs.Int64("count", 0, "threads to start (required)")
	rate := fs.Int64("rate", 200, "threads per second")
	procs := fs.Int64("procs", 1, "processes to spread the threads over")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *procs < 1 || *procs > *n {
		return fmt.Errorf("-procs must be between 1 and -count (got %d)", *procs)
	}
	if *procs > 1 {
		per, perRate := *n / *procs, max(*rate / *procs, 1)
		for i := int64(1); i < *procs; i++ {
			child := exec.Command(os.Args[0], "threads", "-count", strconv.FormatInt(per, 10), "-rate", strconv.FormatInt(perRate, 10))
			child.Stdout, child.Stderr = os.Stdout, os.Stderr
			if err := child.Start(); err != nil {
				return fmt.Errorf("starting child process %d: %w", i, err)
			}
		}
		*n -= per * (*procs - 1)
		*rate = perRate
	}
	debug.SetMaxThreads(int(*n) + 1000)
	started := make(chan struct{})
	err := grow("threads", *n, *rate, 1, count, func(int64) (int64, error) {
		go park(started)
		<-started
		return 1, nil
	})
	if err != nil {
		return err
	}
	hold()
	return nil
}

// park pins its goroutine to an OS thread and keeps that thread asleep in
// the kernel, so the runtime needs a new thread for the next goroutine.
func park(started chan<- struct{}) {
	runtime.LockOSThread()
	started <- struct{}{}
	for {
		ts := syscall.Timespec{Sec: 3600}
		_ = syscall.Nanosleep(&ts, nil)
	}
}
