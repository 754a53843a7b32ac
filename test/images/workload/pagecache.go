package main

import (
	"errors"
	"flag"
	"fmt"
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
	if *every <= 0 {
		return errors.New("-every must be positive")
	}
	f, err := newDiskFile(*dir, size.bytes(), "pagecache")
	if err != nil {
		return err
	}
	defer f.Close()
	for range 2 {
		if err := f.readAll(); err != nil {
			return err
		}
	}
	fmt.Printf("pagecache: %s written and read twice under %s\n", mib(size.bytes()), *dir)
	fmt.Println(workloadlog.Holding)
	for {
		time.Sleep(*every)
		if err := f.readAll(); err != nil {
			return err
		}
	}
}
