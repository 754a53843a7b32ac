// Command evictkit-cluster brings evictkit's kind cluster up and down
// (package internal/kindcluster). The Makefile runs it; see `make help`.
//
//	evictkit-cluster [flags] up                    create (or check) the cluster
//	evictkit-cluster [flags] down                  delete it and its filesystems
//	evictkit-cluster [flags] logs                  export its logs to _output/logs
//	evictkit-cluster [flags] kubelet NODE WHICH    run the evictkit or upstream kubelet on NODE
//
// It talks to the project's Docker engine: run it with DOCKER_HOST from
// scripts/engine.sh env.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/evictkit/evictkit/internal/kindcluster"
)

func main() {
	var o kindcluster.Options
	flag.StringVar(&o.Name, "name", "", "cluster name (default: the config's, else "+kindcluster.DefaultName+")")
	flag.StringVar(&o.Config, "config", "", "kind config (default kind-config.yaml)")
	flag.StringVar(&o.Image, "image", "", "node image (default: the one in _output/node-image)")
	flag.StringVar(&o.Kubeconfig, "kubeconfig", "", "where to write the kubeconfig (default _output/kubeconfig)")
	flag.IntVar(&o.Workers, "workers", -1, "number of worker nodes (0: one node; default: as in the config)")
	flag.DurationVar(&o.ReadyTimeout, "ready-timeout", 5*time.Minute, "how long to wait for every node to be Ready")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: evictkit-cluster [flags] up | down | logs | kubelet NODE evictkit|upstream")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	var err error
	switch cmd, args := flag.Arg(0), flag.Args()[1:]; {
	case cmd == "up" && len(args) == 0:
		err = kindcluster.Up(ctx, o)
	case cmd == "down" && len(args) == 0:
		err = kindcluster.Down(ctx, o)
	case cmd == "logs" && len(args) == 0:
		var dir string
		dir, err = kindcluster.Logs(ctx, o, "")
		if err == nil {
			fmt.Println(dir)
		}
	case cmd == "kubelet" && len(args) == 2:
		err = kindcluster.SwitchKubelet(ctx, o, args[0], args[1])
	default:
		flag.Usage()
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		os.Exit(1)
	}
}
