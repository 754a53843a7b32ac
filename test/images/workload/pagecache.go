package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/evictkit/evictkit/internal/workloadlog"
)

// pageCache writes one file of -size under -dir (unlinked once open, as
// thrash's), reads it twice so its pages move to the active list, logs
// that it holds them, then reads it again every -every to keep them
// there, as a reader streaming a data set would. The pages count in the
// container's memory usage, and upstream's working set (usage minus
// inactive file pages) counts them as used; all of them are clean and
// unmapped, so the kernel can drop them at any time. Between reads it
// uses no CPU: the node's kubelet is not starved by the test.
func pageCache(args []string) error {
	fs := flag.NewFlagSet("pagecache", flag.ContinueOnError)
	dir := fs.String("dir", "", "directory for the file, on a disk (required)")
	size := quantity(fs, "size", "0", "size of the file (required)")
	every := fs.Duration("every", 5*time.Second, "how often to read the file again once it is cached")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if size.bytes() <= 0 {
		return errors.New("-size must be positive")
	}
	if *every <= 0 {
		return errors.New("-every must be positive")
	}
	if err := makeDir(*dir); err != nil {
		return err
	}
	f, err := writeUnlinked(filepath.Join(*dir, fmt.Sprintf("pagecache-%d", os.Getpid())), size.bytes())
	if err != nil {
		return err
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	read := func() error {
		if _, err := io.CopyBuffer(io.Discard, io.NewSectionReader(f, 0, size.bytes()), buf); err != nil {
			return fmt.Errorf("reading the file under %s: %w", *dir, err)
		}
		return nil
	}
	for range 2 {
		if err := read(); err != nil {
			return err
		}
	}
	fmt.Printf("pagecache: %s written and read twice under %s\n", mib(size.bytes()), *dir)
	fmt.Println(workloadlog.Holding)
	for {
		time.Sleep(*every)
		if err := read(); err != nil {
			return err
		}
	}
}
