// Command workload is evictkit's test workload, packaged FROM scratch as
// evictkit.local/workload:<hash> and loaded into the kind nodes (no registry
// is reachable). Subcommands:
//
//	workload serve [-addr :8080]
//	    answers every HTTP request with "evictkit-workload <hostname>".
//	workload fetch [-timeout 60s] URL...
//	    GETs each URL until it answers 200 or the timeout passes, prints
//	    "URL -> body", and exits 1 if any URL never answered.
//
// and the pressure hogs of the node e2e suites (test/node). Each grows at a
// rate up to a bound, prints its progress, then holds what it took until it
// is killed: it survives SIGTERM, so only SIGKILL ends it (the kubelet's
// grace period runs out), and logs "received terminated at <time> with
// <taken> taken" when the kill starts. The bound keeps a test that goes wrong from
// taking the whole machine.
//
//	workload memory -size 900Mi [-rate 50Mi] [-after FILE] [-pause-at S -resume FILE] [-threads N]
//	    anonymous memory, every page touched (rate per second); with
//	    -after, only once FILE exists; with -pause-at, it stops at S
//	    until the -resume FILE exists; with -threads, N threads touch
//	    memory at once (each an equal share of size and rate).
//	workload disk -dir D -size 400Mi [-rate 20Mi] [-file 16Mi] [-pause-at S -resume FILE] [-freeze-on-term]
//	    files of -file bytes each under D, written and fsynced; with
//	    -freeze-on-term it stops writing at the first SIGTERM.
//	workload inodes -dir D -count 5000 [-rate 500]
//	    empty files under D.
//	workload threads -count 4000 [-rate 200]
//	    OS threads, each parked in a blocking sleep: they count against
//	    the node's pid.available like processes do.
//	workload sleep
//	    holds nothing, runs until killed (an innocent bystander).
//	workload chatter -size 50Mi
//	    writes that much log to stdout and exits 0 (a dead container
//	    whose log is left on the node).
//	workload thrash -dir D -size 300Mi
//	    writes a file of -size under D and reads it over and over: under
//	    a smaller container memory limit its page cache is reclaimed and
//	    refaulted without end, and the node's memory PSI rises.
//
// and the benchmark's sampler (scripts/bench-e2e.sh):
//
//	workload memwatch -cgroup D -capacity C -level L [-interval 5ms]
//	    logs when the memory cgroup D's memory.available (C minus its
//	    working set) falls below L and when it recovers.
//	workload diskwatch -dir D -level L [-interval 5ms]
//	    logs when the available bytes of the filesystem D is on (statfs,
//	    as nodefs.available counts them) fall below L and when they
//	    recover.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"strings"
	"time"
)

// The main goroutine keeps the process's main thread to itself, and the
// subcommand runs on other threads. The kernel delivers a signal sent to
// the process to its main thread whenever that thread can take it, and a
// thread takes a signal only on its way back to user space: a hog thread
// stuck in a page fault while the kernel reclaims memory at a cgroup's
// limit would hold the kill's SIGTERM for hundreds of milliseconds, so
// the hog would log it late and, with -freeze-on-term, keep growing into
// the limit after the kubelet had acted. Parked in a channel receive, the
// main thread takes it at once.
func init() { runtime.LockOSThread() }

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	switch os.Args[1] {
	case "memory", "disk", "inodes", "threads", "sleep", "thrash", "pagecache":
		survive()
	}
	done := make(chan error, 1)
	go func() { done <- run(os.Args[1], os.Args[2:]) }()
	if err := <-done; err != nil {
		fmt.Fprintf(os.Stderr, "workload %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}

// run runs the subcommand cmd with its arguments.
func run(cmd string, args []string) error {
	switch cmd {
	case "serve":
		return serve(args)
	case "fetch":
		return fetch(args)
	case "memory":
		return hogMemory(args)
	case "disk":
		return hogDisk(args)
	case "inodes":
		return hogInodes(args)
	case "threads":
		return hogThreads(args)
	case "sleep":
		return idle(args)
	case "thrash":
		return thrash(args)
	case "pagecache":
		return pageCache(args)
	case "memwatch":
		return memWatch(args)
	case "diskwatch":
		return diskWatch(args)
	case "chatter":
		return chatter(args)
	}
	usage()
	return nil
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: workload serve|fetch|memory|disk|inodes|threads|sleep|thrash|pagecache|chatter|memwatch|diskwatch [flags] (see the package doc)")
	os.Exit(2)
}

func serve(args []string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	addr := fs.String("addr", ":8080", "listen address")
	if err := fs.Parse(args); err != nil {
		return err
	}
	host, _ := os.Hostname()
	http.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, "evictkit-workload %s\n", host)
	})
	fmt.Printf("serving on %s\n", *addr)
	return http.ListenAndServe(*addr, nil)
}

func fetch(args []string) error {
	fs := flag.NewFlagSet("fetch", flag.ContinueOnError)
	timeout := fs.Duration("timeout", 60*time.Second, "how long to keep trying each URL")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return errors.New("no URL given")
	}
	var failed []string
	for _, url := range fs.Args() {
		body, err := getUntil(url, *timeout)
		if err != nil {
			fmt.Printf("%s -> error: %v\n", url, err)
			failed = append(failed, url)
			continue
		}
		fmt.Printf("%s -> %s\n", url, strings.TrimSpace(body))
	}
	if len(failed) > 0 {
		return fmt.Errorf("no answer from %s", strings.Join(failed, ", "))
	}
	return nil
}

// getUntil retries GET url until it answers 200 or timeout passes.
func getUntil(url string, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	client := &http.Client{Timeout: 5 * time.Second}
	var last error
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return "", err
		}
		resp, err := client.Do(req)
		if err == nil {
			body, rerr := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && rerr == nil {
				return string(body), nil
			}
			err = fmt.Errorf("status %s", resp.Status)
		}
		last = err
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("%w (last: %v)", ctx.Err(), last)
		case <-time.After(time.Second):
		}
	}
}
