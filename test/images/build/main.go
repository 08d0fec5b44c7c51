// Command build makes the test guest images (test/images) under -out: `go run
// ./test/images/build -out _output/images`. A second run with the same inputs does nothing.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/vireo-dev/vireo/test/images"
)

func main() {
	out := flag.String("out", "_output/images", "Output directory; the tiny guest goes to <out>/tiny.")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	res, err := images.Build(ctx, images.Options{Out: *out, Log: os.Stderr})
	if err != nil {
		fmt.Fprintln(os.Stderr, "images:", err)
		os.Exit(1)
	}
	if res.Cached {
		fmt.Printf("images: %s is up to date\n", res.Dir)
		return
	}
	fmt.Printf("images: %s (containerDisk %s)\n", res.Dir, res.Manifest.ContainerDisk.Digest)
}
