package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// pressureFile is the kernel's memory pressure stall information. On
// cgroup v1 nodes it is the whole machine's, and a container sees it too.
const pressureFile = "/proc/pressure/memory"

// thrash writes one file of -size under -dir, unlinks it (the process
// keeps it open: nothing is left behind however the process ends), then
// reads it from start to end over and over. Under a container memory limit
// a little smaller than the file, the kernel keeps reclaiming the
// container's page cache to make room for the next read and refaulting
// what it reclaimed a moment before, which it counts as the working set:
// the reader stalls on memory, and the node's memory pressure stall
// figures rise, the more the slower the refaults: give it a file on a
// real disk (on a loop device whose backing file sits in the host's page
// cache a refault is a copy). Every 10 s it logs its passes and the first
// line of /proc/pressure/memory.
func thrash(args []string) error {
	fs := flag.NewFlagSet("thrash", flag.ContinueOnError)
	dir := fs.String("dir", "", "directory for the file, on a disk (required)")
	size := quantity(fs, "size", "0", "size of the file (required)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	f, err := newDiskFile(*dir, size.bytes(), "thrash")
	if err != nil {
		return err
	}
	defer f.Close()
	fmt.Printf("thrashing %s under %s\n", mib(size.bytes()), *dir)
	passes, last := 0, time.Now()
	for {
		if err := f.readAll(); err != nil {
			return err
		}
		passes++
		if time.Since(last) >= 10*time.Second {
			fmt.Printf("thrash: %d passes; %s\n", passes, memoryPressure())
			last = time.Now()
		}
	}
}

// diskFile is a file a hog wrote under a directory on a disk and reads
// back: written, fsynced and unlinked at once (see writeUnlinked).
type diskFile struct {
	*os.File
	dir  string
	size int64
	buf  []byte
}

// newDiskFile writes a file of size bytes under dir (made if missing),
// named from prefix and the process ID.
func newDiskFile(dir string, size int64, prefix string) (*diskFile, error) {
	if size <= 0 {
		return nil, errors.New("-size must be positive")
	}
	if err := makeDir(dir); err != nil {
		return nil, err
	}
	f, err := writeUnlinked(filepath.Join(dir, fmt.Sprintf("%s-%d", prefix, os.Getpid())), size)
	if err != nil {
		return nil, err
	}
	return &diskFile{File: f, dir: dir, size: size, buf: make([]byte, 1<<20)}, nil
}

// readAll reads the file from start to end.
func (d *diskFile) readAll() error {
	if _, err := io.CopyBuffer(io.Discard, io.NewSectionReader(d.File, 0, d.size), d.buf); err != nil {
		return fmt.Errorf("reading the file under %s: %w", d.dir, err)
	}
	return nil
}

// writeUnlinked creates path, writes n bytes to it, fsyncs it and removes
// its name, returning the open file.
func writeUnlinked(path string, n int64) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	if err := os.Remove(path); err != nil {
		f.Close()
		return nil, err
	}
	buf := dataBuffer()
	for done := int64(0); done < n; {
		k := min(int64(len(buf)), n-done)
		if _, err := f.Write(buf[:k]); err != nil {
			f.Close()
			return nil, fmt.Errorf("writing %s: %w", path, err)
		}
		done += k
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return nil, fmt.Errorf("syncing %s: %w", path, err)
	}
	return f, nil
}

// memoryPressure is the "some" line of /proc/pressure/memory, or why it
// could not be read.
func memoryPressure() string {
	f, err := os.Open(pressureFile)
	if err != nil {
		return fmt.Sprintf("no %s: %v", pressureFile, err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	if !s.Scan() {
		return fmt.Sprintf("%s is empty", pressureFile)
	}
	return "memory pressure " + strings.TrimSpace(s.Text())
}
