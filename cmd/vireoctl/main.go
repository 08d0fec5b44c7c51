// Command vireoctl is Vireo's command-line client (also installable as the kubectl plugin
// kubectl-vireo, cmd/kubectl-vireo): serial console, VNC, and the VM actions start, stop and restart.
package main

import (
	"os"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/component-base/cli"

	"github.com/vireo-dev/vireo/vireoctl"
)

func main() {
	os.Exit(cli.Run(vireoctl.NewCommand(genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr})))
}
