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
// benchmark. Every -interval it computes the node's memory.available by
// two rules from one reading: the Summary API's (capacity minus usage
// plus inactive file pages) and the reclaimable one (capacity minus usage
// plus the clean, unmapped file pages, at least the inactive ones; the
// rule EvictionReclaimableMemory documents, computed here on its own so
// that the benchmark can check the kubelet against it). For each rule it
// logs, with its own clock:
//
//	crossed at <time> available <bytes>[ rule <rule>]     available fell below -level
//	recovered at <time> available <bytes>[ rule <rule>]   it is back at or above -level
//	lowest <bytes> at <time>[ rule <rule>]                at each recovery: the low point
//
// where the Summary API's rule has no suffix and the reclaimable one
// "rule reclaimable". It runs until killed.
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
	if _, err := s.sample(); err != nil {
		return err
	}
	fmt.Printf("memwatch: sampling %s every %s (cgroup v2: %v), level %d\n", *dir, *interval, s.v2, level.bytes())
	summary := levelWatch{}
	reclaimable := levelWatch{rule: workloadlog.RuleReclaimable}
	tick := time.NewTicker(*interval)
	defer tick.Stop()
	for range tick.C {
		u, err := s.sample()
		now := time.Now()
		if err != nil {
			fmt.Printf("memwatch: %v\n", err)
			continue
		}
		summary.sample(capacity.bytes()-u.workingSet(), level.bytes(), now)
		reclaimable.sample(capacity.bytes()-u.unreclaimable(), level.bytes(), now)
	}
	return nil
}

// levelWatch follows an amount left through samples and logs, with the
// sampler's clock, when it falls below a level, when it is back, and at
// each recovery the low point (the lines of the package doc), naming its
// rule ("" for the Summary API's).
type levelWatch struct {
	rule     string
	below    bool
	lowest   int64
	lowestAt time.Time
}

// sample takes one sample: avail left at now, against level.
func (w *levelWatch) sample(avail, level int64, now time.Time) {
	switch {
	case !w.below && avail < level:
		w.below, w.lowest, w.lowestAt = true, avail, now
		fmt.Println(workloadlog.Crossing{At: now, Available: avail, Rule: w.rule})
	case w.below && avail < w.lowest:
		w.lowest, w.lowestAt = avail, now
	case w.below && avail >= level:
		w.below = false
		fmt.Println(workloadlog.Crossing{Recovered: true, At: now, Available: avail, Rule: w.rule})
		suffix := ""
		if w.rule != "" {
			suffix = " rule " + w.rule
		}
		fmt.Printf("lowest %d at %s%s\n", w.lowest, stamp(w.lowestAt), suffix)
	}
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// cgroupSampler reads a memory cgroup's usage and the file page counts of
// its memory.stat (v1: memory.usage_in_bytes and the hierarchical total_*
// counts; v2: memory.current, or anon + file at the root, and the plain
// counts).
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

// memUsage is one reading of a memory cgroup, in bytes.
type memUsage struct {
	usage                        int64
	activeFile, inactiveFile     int64
	dirty, writeback, mappedFile int64
}

// workingSet is the Summary API's: usage minus inactive file pages.
func (u memUsage) workingSet() int64 { return max(u.usage-u.inactiveFile, 0) }

// unreclaimable is usage minus what the kernel can drop without I/O or
// unmapping: file pages that are neither dirty, under writeback nor
// mapped, and never less than the inactive ones.
func (u memUsage) unreclaimable() int64 {
	clean := u.activeFile + u.inactiveFile - u.dirty - u.writeback - u.mappedFile
	if clean < u.inactiveFile {
		clean = u.inactiveFile
	}
	return max(u.usage-clean, 0)
}

// statNames are memory.stat's names of memUsage's file counts, in the
// order active, inactive, dirty, writeback, mapped.
var (
	statNamesV1 = [5]string{"total_active_file", "total_inactive_file", "total_dirty", "total_writeback", "total_mapped_file"}
	statNamesV2 = [5]string{"active_file", "inactive_file", "file_dirty", "file_writeback", "file_mapped"}
)

func (s *cgroupSampler) sample() (memUsage, error) {
	stat, err := s.read("memory.stat")
	if err != nil {
		return memUsage{}, err
	}
	fields := parseStat(stat)
	names := statNamesV1
	if s.v2 {
		names = statNamesV2
	}
	var counts [5]int64
	for i, name := range names {
		v, ok := fields[name]
		if !ok {
			return memUsage{}, fmt.Errorf("memory.stat of %s has no %s", s.dir, name)
		}
		counts[i] = v
	}
	u := memUsage{activeFile: counts[0], inactiveFile: counts[1], dirty: counts[2], writeback: counts[3], mappedFile: counts[4]}
	if !s.v2 {
		u.usage, err = s.readInt("memory.usage_in_bytes")
		return u, err
	}
	u.usage, err = s.readInt("memory.current")
	if errors.Is(err, fs.ErrNotExist) {
		u.usage, err = fields["anon"]+fields["file"], nil
	}
	return u, err
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
