//evictkit:file EvictionDiskFastPath
//go:build linux

package eviction

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// statfsFigures reads the figures of the filesystem path is on, as
// cAdvisor reads them: available is what unprivileged writers can use.
func statfsFigures(path string) (fsFigures, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return fsFigures{}, fmt.Errorf("statfs %s: %w", path, err)
	}
	bsize := int64(st.Bsize)
	return fsFigures{
		capacity:   int64(st.Blocks) * bsize,
		available:  int64(st.Bavail) * bsize,
		inodes:     int64(st.Files),
		inodesFree: int64(st.Ffree),
	}, nil
}

// treeUsage adds up the blocks and inodes a directory tree holds on the
// filesystem of its root, counting each inode once and leaving out what
// is mounted inside it (as du -x counts). A tree that does not exist
// holds nothing; entries that vanish during the walk are skipped.
func treeUsage(root string) (diskUsage, error) {
	var (
		u    diskUsage
		dev  uint64
		seen = map[uint64]bool{}
	)
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		info, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		st, ok := info.Sys().(*syscall.Stat_t)
		if !ok {
			return fmt.Errorf("%s: no stat figures", path)
		}
		if path == root {
			dev = uint64(st.Dev)
		} else if uint64(st.Dev) != dev {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if seen[uint64(st.Ino)] {
			return nil
		}
		seen[uint64(st.Ino)] = true
		u.bytes += int64(st.Blocks) * 512
		u.inodes++
		return nil
	})
	if err != nil {
		return diskUsage{}, fmt.Errorf("measuring %s: %w", root, err)
	}
	return u, nil
}
