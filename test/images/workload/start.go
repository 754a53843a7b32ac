package main

import (
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
