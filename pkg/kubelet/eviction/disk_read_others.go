//evictkit:file EvictionDiskFastPath
//go:build !linux

package eviction

import "errors"

// errDiskReadUnsupported: the disk fast path reads filesystems on Linux only.
var errDiskReadUnsupported = errors.New("reading filesystems directly is supported on Linux only")

func statfsFigures(string) (fsFigures, error) { return fsFigures{}, errDiskReadUnsupported }

func treeUsage(string) (diskUsage, error) { return diskUsage{}, errDiskReadUnsupported }
