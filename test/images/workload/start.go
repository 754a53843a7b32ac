package main

import (
	"flag"
	"fmt"
	"os"
	"time"
)

// waitForFile blocks until path exists, looking every 50 ms: the start
// signal a test gives a pod that it had to create earlier (a node under
// disk or memory pressure admits no new pod).
func waitForFile(path string) {
	fmt.Printf("waiting for %s\n", path)
	for {
		if _, err := os.Stat(path); err == nil {
			fmt.Printf("%s exists at %s: starting\n", path, time.Now().UTC().Format(time.RFC3339Nano))
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// pause is a hog's optional stop at a size until a file exists (flags
// -pause-at and -resume): a test lets the hog take part of its size,
// checks what the kubelet sees, then lets it go on.
type pause struct {
	at     *quantityFlag
	resume *string
	done   bool
}

// pauseFlags adds -pause-at and -resume to fs.
func pauseFlags(fs *flag.FlagSet) *pause {
	return &pause{
		at:     quantity(fs, "pause-at", "0", "stop growing at this size until the -resume file exists (0: no pause)"),
		resume: fs.String("resume", "", "the file that ends the pause at -pause-at"),
	}
}

// check validates the flags against the hog's size.
func (p *pause) check(size *quantityFlag) error {
	if (p.at.bytes() > 0) != (*p.resume != "") {
		return fmt.Errorf("-pause-at and -resume go together (got -pause-at %s, -resume %q)", p.at.String(), *p.resume)
	}
	if p.at.bytes() > 0 && p.at.bytes() >= size.bytes() {
		return fmt.Errorf("-pause-at %s must be below -size %s", p.at.String(), size.String())
	}
	return nil
}

// wait blocks once, when taken has reached the pause's size, until the
// resume file exists.
func (p *pause) wait(what string, taken int64, unit func(int64) string) {
	if p.done || p.at.bytes() == 0 || taken < p.at.bytes() {
		return
	}
	fmt.Printf("%s: paused at %s\n", what, unit(taken))
	waitForFile(*p.resume)
	p.done = true
}
