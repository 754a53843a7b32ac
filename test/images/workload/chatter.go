package main

import (
	"bufio"
	"crypto/rand"
	"encoding/base64"
	"flag"
	"fmt"
	"os"
)

// chatter writes -size bytes of log (lines of random base64, which the
// kubelet's gzip of rotated logs cannot shrink much) to stdout as fast as
// the runtime takes it, then exits 0: a dead container whose log still
// takes that room in the kubelet's pod log directory.
func chatter(args []string) error {
	fs := flag.NewFlagSet("chatter", flag.ContinueOnError)
	size := quantity(fs, "size", "0", "bytes of log to write (required)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	total := size.bytes()
	if total <= 0 {
		return fmt.Errorf("chatter: -size must be positive (got %d)", total)
	}
	text, err := randomLines(4<<20, 1024)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	var written int64
	for written < total {
		n := min(int64(len(text)), total-written)
		if _, err := w.Write(text[:n]); err != nil {
			return err
		}
		written += n
	}
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "chatter: wrote %s of log\n", mib(written))
	return nil
}

// randomLines is size bytes of base64 lines of length line (newline
// included).
func randomLines(size, line int) ([]byte, error) {
	raw := make([]byte, size)
	if _, err := rand.Read(raw); err != nil {
		return nil, err
	}
	enc := base64.StdEncoding.EncodeToString(raw)
	out := make([]byte, 0, size)
	for len(out)+line <= size {
		out = append(out, enc[:line-1]...)
		out = append(out, '\n')
		enc = enc[line-1:]
	}
	return out, nil
}
