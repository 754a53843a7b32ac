package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

// hogDisk writes files of a fixed size under a directory, each fsynced, so
// the space is really allocated on the filesystem the directory is on.
func hogDisk(args []string) error {
	fs := flag.NewFlagSet("disk", flag.ContinueOnError)
	dir := fs.String("dir", "", "directory to fill (required)")
	size := quantity(fs, "size", "0", "bytes to write (required)")
	rate := quantity(fs, "rate", "20Mi", "bytes per second")
	file := quantity(fs, "file", "16Mi", "size of each file")
	freeze := fs.Bool("freeze-on-term", false, "stop writing at the first SIGTERM (hold what is written): running out of room then means the kill came too late")
	pause := pauseFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := pause.check(size); err != nil {
		return err
	}
	if *freeze {
		freezeOnTerm.Store(true)
	}
	if err := makeDir(*dir); err != nil {
		return err
	}
	buf := dataBuffer()
	w := &fileWriter{dir: *dir, fileSize: file.bytes(), buf: buf}
	defer w.close()
	write := func(n int64) (int64, error) {
		pause.wait("disk", taken.Load(), mib)
		return w.write(n)
	}
	if err := grow("disk", size.bytes(), rate.bytes(), int64(len(buf)), mib, write); err != nil {
		return err
	}
	if err := w.close(); err != nil && !outOfRoom(err) {
		return err
	}
	hold()
	return nil
}

// fileWriter appends to numbered files, starting a new one every fileSize
// bytes.
type fileWriter struct {
	dir      string
	fileSize int64
	buf      []byte
	f        *os.File
	written  int64
	files    int
}

// write writes n ≤ len(buf) bytes; it returns a short count without an
// error when the filesystem is full.
func (w *fileWriter) write(n int64) (int64, error) {
	if w.f == nil {
		f, err := os.Create(filepath.Join(w.dir, fmt.Sprintf("fill-%05d", w.files)))
		if err != nil {
			if outOfRoom(err) {
				return 0, nil
			}
			return 0, err
		}
		w.f, w.written = f, 0
		w.files++
	}
	got, err := w.f.Write(w.buf[:n])
	w.written += int64(got)
	if err != nil {
		if outOfRoom(err) {
			return int64(got), nil
		}
		return int64(got), err
	}
	if w.written >= w.fileSize {
		if err := w.close(); err != nil {
			if outOfRoom(err) {
				return int64(got), nil
			}
			return int64(got), err
		}
	}
	return int64(got), nil
}

func (w *fileWriter) close() error {
	if w.f == nil {
		return nil
	}
	f := w.f
	w.f = nil
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
