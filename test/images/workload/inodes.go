package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

// hogInodes creates empty files: each takes an inode and no data blocks.
func hogInodes(args []string) error {
	fs := flag.NewFlagSet("inodes", flag.ContinueOnError)
	dir := fs.String("dir", "", "directory to fill (required)")
	n := fs.Int64("count", 0, "files to create (required)")
	rate := fs.Int64("rate", 500, "files per second")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := makeDir(*dir); err != nil {
		return err
	}
	var next int64
	err := grow("inodes", *n, *rate, 1, count, func(int64) (int64, error) {
		f, err := os.OpenFile(filepath.Join(*dir, fmt.Sprintf("inode-%07d", next)), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err != nil {
			if outOfRoom(err) {
				return 0, nil
			}
			return 0, err
		}
		next++
		return 1, f.Close()
	})
	if err != nil {
		return err
	}
	hold()
	return nil
}
