package main

import (
	"errors"
	"flag"
	"fmt"
	"syscall"
	"time"
)

// diskWatch is the diskwatch subcommand: a fast sampler of a filesystem
// (the node's nodefs, a directory of it mounted read-only into the pod)
// for the side-by-side benchmark. Every -interval it reads the bytes
// available to unprivileged writers with statfs, as the kubelet's
// nodefs.available counts them, and logs memwatch's lines (levelWatch).
// It runs until killed.
func diskWatch(args []string) error {
	fs := flag.NewFlagSet("diskwatch", flag.ContinueOnError)
	dir := fs.String("dir", "", "a directory on the filesystem to sample (required)")
	level := quantity(fs, "level", "0", "the available bytes level to watch (required)")
	interval := fs.Duration("interval", 5*time.Millisecond, "time between samples")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" || level.bytes() <= 0 || *interval <= 0 {
		return errors.New("diskwatch: -dir, -level and -interval are required and must be positive")
	}
	if _, err := availableBytes(*dir); err != nil {
		return err
	}
	fmt.Printf("diskwatch: sampling %s every %s, level %d\n", *dir, *interval, level.bytes())
	var w levelWatch
	tick := time.NewTicker(*interval)
	defer tick.Stop()
	for range tick.C {
		avail, err := availableBytes(*dir)
		now := time.Now()
		if err != nil {
			fmt.Printf("diskwatch: %v\n", err)
			continue
		}
		w.sample(avail, level.bytes(), now)
	}
	return nil
}

// availableBytes is what unprivileged writers have left on dir's
// filesystem.
func availableBytes(dir string) (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, fmt.Errorf("diskwatch: statfs %s: %w", dir, err)
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}
