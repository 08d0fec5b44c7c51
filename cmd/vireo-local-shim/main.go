// Command vireo-local-shim starts and watches the containers of vireo-local's nodes: `node-shim
// DIR` (a container's supervisor) and `node-init FILE` (the container's first process, which
// execs its binary). It is a binary of its own because it runs twice for every container start
// and exec probe: vireo-local's package initialization alone takes about 0.1 s.
package main

import (
	"fmt"
	"os"

	"github.com/vireo-dev/vireo/localcluster/node/container"
)

func main() {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "node-shim":
			os.Exit(container.ShimMain(os.Args[2:]))
		case "node-init":
			os.Exit(container.InitMain(os.Args[2:]))
		}
	}
	fmt.Fprintln(os.Stderr, "usage: vireo-local-shim node-shim DIR | node-init [--exec] FILE (run by vireo-local's nodes)")
	os.Exit(2)
}
