// Command vireo-local runs a whole Vireo installation on this machine (up, down, status).
package main

import (
	"os"

	"k8s.io/component-base/cli"

	"github.com/vireo-dev/vireo/localcluster/cmd"
)

func main() {
	os.Exit(cli.Run(cmd.New(os.Stdout)))
}
