package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/evictkit/evictkit/internal/workloadlog"
)

// memWatch is the memwatch subcommand: a fast sampler of a memory cgroup
// (the node's, mounted read-only into the pod) for the side-by-side
// benchmark. Every -interval it computes the node's memory.available the
// way the kubelet's Summary API does (capacity minus usage plus inactive
// file pages) and logs, with its own clock:
//
//	crossed at <time> available <bytes>     available fell below -level
//	recovered at <time> available <bytes>   it is back at or above -level
//	lowest <bytes> at <time>                at each recovery: the low point
//
// It runs until killed.
func memWatch(args []string) error {
	fs := flag.NewFlagSet("memwatch", flag.ContinueOnError)
	dir := fs.String("cgroup", "", "the memory cgroup to sample (required)")
	capacity := quantity(fs, "capacity", "0", "the node's memory capacity (required)")
	level := quantity(fs, "level", "0", "the memory.available level to watch (required)")
	interval := fs.Duration("interval", 5*time.Millisecond, "time between samples")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" || capacity.bytes() <= 0 || level.bytes() <= 0 || *interval <= 0 {
		return errors.New("memwatch: -cgroup, -capacity, -level and -interval are required and must be positive")
	}
	s, err := newCgroupSampler(*dir)
	if err != nil {
		return err
	}
	if _, err := s.workingSet(); err != nil {
		return err
	}
	fmt.Printf("memwatch: sampling %s every %s (cgroup v2: %v), level %d\n", *dir, *interval, s.v2, level.bytes())
	var w levelWatch
	tick := time.NewTicker(*interval)
	defer tick.Stop()
	for range tick.C {
		ws, err := s.workingSet()
		now := time.Now()
		if err != nil {
			fmt.Printf("memwatch: %v\n", err)
			continue
		}
		w.sample(capacity.bytes()-ws, level.bytes(), now)
	}
	return nil
}

// levelWatch follows an amount left through samples and logs, with the
// sampler's clock, when it falls below a level, when it is back, and at
// each recovery the low point (the lines of the package doc).
type levelWatch struct {
	below    bool
	lowest   int64
	lowestAt time.Time
}

// sample takes one sample: avail left at now, against level.
func (w *levelWatch) sample(avail, level int64, now time.Time) {
	switch {
	case !w.below && avail < level:
		w.below, w.lowest, w.lowestAt = true, avail, now
		fmt.Println(workloadlog.Crossing{At: now, Available: avail})
	case w.below && avail < w.lowest:
		w.lowest, w.lowestAt = avail, now
	case w.below && avail >= level:
		w.below = false
		fmt.Println(workloadlog.Crossing{Recovered: true, At: now, Available: avail})
		fmt.Printf("lowest %d at %s\n", w.lowest, stamp(w.lowestAt))
	}
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// cgroupSampler reads a memory cgroup's working set: usage minus inactive
// file pages (v1: memory.usage_in_bytes and total_inactive_file; v2:
// memory.current, or anon + file at the root, and inactive_file).
type cgroupSampler struct {
	dir string
	v2  bool
	buf bytes.Buffer
}

func newCgroupSampler(dir string) (*cgroupSampler, error) {
	s := &cgroupSampler{dir: dir}
	if _, err := os.Stat(filepath.Join(dir, "memory.stat")); err != nil {
		return nil, fmt.Errorf("memwatch: %s is not a memory cgroup: %w", dir, err)
	}
	_, err := os.Stat(filepath.Join(dir, "memory.usage_in_bytes"))
	s.v2 = errors.Is(err, fs.ErrNotExist)
	return s, nil
}

func (s *cgroupSampler) workingSet() (int64, error) {
	stat, err := s.read("memory.stat")
	if err != nil {
		return 0, err
	}
	fields := parseStat(stat)
	if !s.v2 {
		usage, err := s.readInt("memory.usage_in_bytes")
		if err != nil {
			return 0, err
		}
		return max(usage-fields["total_inactive_file"], 0), nil
	}
	usage, err := s.readInt("memory.current")
	if errors.Is(err, fs.ErrNotExist) {
		usage, err = fields["anon"]+fields["file"], nil
	}
	if err != nil {
		return 0, err
	}
	return max(usage-fields["inactive_file"], 0), nil
}

func (s *cgroupSampler) read(name string) ([]byte, error) {
	f, err := os.Open(filepath.Join(s.dir, name))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s.buf.Reset()
	if _, err := s.buf.ReadFrom(f); err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	return s.buf.Bytes(), nil
}

func (s *cgroupSampler) readInt(name string) (int64, error) {
	b, err := s.read(name)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(string(bytes.TrimSpace(b)), 10, 64)
}

// parseStat parses "key value" lines.
func parseStat(b []byte) map[string]int64 {
	out := map[string]int64{}
	for _, line := range bytes.Split(b, []byte{'\n'}) {
		k, v, ok := bytes.Cut(line, []byte{' '})
		if !ok {
			continue
		}
		if n, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			out[string(k)] = n
		}
	}
	return out
}
