package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/evictkit/evictkit/internal/workloadlog"
)

// quantityFlag is a flag holding a Kubernetes quantity ("900Mi", "1G").
type quantityFlag struct{ resource.Quantity }

func (q *quantityFlag) Set(s string) error {
	v, err := resource.ParseQuantity(s)
	if err != nil {
		return err
	}
	if v.Sign() < 0 {
		return fmt.Errorf("%s is negative", s)
	}
	q.Quantity = v
	return nil
}

func (q *quantityFlag) bytes() int64 { return q.Value() }

func quantity(fs *flag.FlagSet, name, def, usage string) *quantityFlag {
	q := &quantityFlag{resource.MustParse(def)}
	fs.Var(q, name, usage)
	return q
}

// grow calls take(n) with n ≤ step until total units are taken, at about
// rate units per second (in ten slices a second), printing progress once a
// second. take returns how many units it took; a short count ends growth
// early without an error (e.g. the disk is full: what was taken is held).
func grow(what string, total, rate, step int64, unit func(int64) string, take func(n int64) (int64, error)) error {
	if total <= 0 || rate <= 0 || step <= 0 {
		return fmt.Errorf("%s: size, rate and step must be positive (got %d, %d, %d)", what, total, rate, step)
	}
	var done int64
	takenUnit.Store(&unit)
	slice := max(rate/10, 1)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	lastReport := time.Now()
	for done < total {
		budget := min(slice, total-done)
		for budget > 0 {
			if freezeOnTerm.Load() && terminated.Load() {
				fmt.Printf("%s: frozen at %s by SIGTERM\n", what, unit(done))
				return nil
			}
			n := min(step, budget)
			got, err := take(n)
			done += got
			taken.Add(got)
			budget -= got
			if err != nil {
				return fmt.Errorf("%s after %s: %w", what, unit(done), err)
			}
			if got < n {
				fmt.Printf("%s: stopped at %s of %s (no more room)\n", what, unit(done), unit(total))
				return nil
			}
		}
		if time.Since(lastReport) >= time.Second {
			fmt.Printf("%s: %s of %s\n", what, unit(done), unit(total))
			lastReport = time.Now()
		}
		<-tick.C
	}
	fmt.Printf("%s: reached %s\n", what, unit(total))
	return nil
}

// taken is what the running hog has taken so far, in its unit (the sum
// over grow's callers: a hog may grow in several threads),
// and takenUnit renders it.
var (
	taken     atomic.Int64
	takenUnit atomic.Pointer[func(int64) string]
	// freezeOnTerm, when set, makes grow stop at the first SIGTERM, and
	// terminated is set once one came.
	freezeOnTerm, terminated atomic.Bool
)

// survive makes SIGTERM and SIGINT harmless for the rest of the process,
// as the shell loops of upstream's test pods do (a container's first
// process gets no default signal actions): only SIGKILL, at the end of the
// grace period the kubelet gives, stops a hog. A hog that exited cleanly
// on SIGTERM would race the kubelet's eviction status with its own exit
// code 0 (phase Succeeded instead of Failed/Evicted), and the specs that
// check grace periods need a pod that uses all of its. Each signal is
// logged with what the hog had taken when it came: with the log's
// timestamps that is when the kubelet started the kill, and how far the
// hog got first. The line carries the hog's own clock reading (the same
// clock as the kubelet's on a node), so it does not depend on when the
// runtime gets to the log.
func survive() {
	ch := make(chan os.Signal, 4)
	signal.Notify(ch, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		for sig := range ch {
			at := time.Now()
			terminated.Store(true)
			what := count(taken.Load())
			if u := takenUnit.Load(); u != nil {
				what = (*u)(taken.Load())
			}
			fmt.Println(workloadlog.Signal{Name: sig.String(), At: at, Taken: what})
		}
	}()
}

// hold keeps what the hog took until the process is killed (see survive).
func hold() {
	fmt.Println(workloadlog.Holding)
	for {
		time.Sleep(time.Hour)
	}
}

// idle is the sleep subcommand: hold nothing.
func idle(args []string) error {
	fs := flag.NewFlagSet("sleep", flag.ContinueOnError)
	if err := fs.Parse(args); err != nil {
		return err
	}
	hold()
	return nil
}

// makeDir checks a hog's required -dir and creates it.
func makeDir(dir string) error {
	if dir == "" {
		return errors.New("-dir is required")
	}
	return os.MkdirAll(dir, 0o755)
}

// outOfRoom reports errors that mean the filesystem is full.
func outOfRoom(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

// dataBuffer is a 1 MiB buffer of patterned bytes to write files with.
func dataBuffer() []byte {
	buf := make([]byte, 1<<20)
	for i := range buf {
		buf[i] = byte(i*7 + 1)
	}
	return buf
}

func mib(n int64) string { return fmt.Sprintf("%d MiB", n>>20) }

func count(n int64) string { return fmt.Sprintf("%d", n) }
