// Command kubectl-vireo is vireoctl as a kubectl plugin: with it on the PATH, `kubectl vireo
// console NAME` is `vireoctl console NAME`.
package main

import (
	"os"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/component-base/cli"

	"github.com/vireo-dev/vireo/vireoctl"
)

func main() {
	cmd := vireoctl.NewCommand(genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr})
	cmd.Use = "kubectl vireo"
	os.Exit(cli.Run(cmd))
}
