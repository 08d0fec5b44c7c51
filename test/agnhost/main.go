// Command agnhost is the part of Kubernetes' e2e test image agnhost that Vireo's tests use
// (netexec, serve-hostname, connect), built into the image 10.250.0.1:5000/e2e-test-images/agnhost
// that vireo-local's registry also serves as registry.k8s.io/e2e-test-images/agnhost.
package main

import (
	"os"

	"github.com/vireo-dev/vireo/test/agnhost/commands"
)

func main() {
	root := commands.Command()
	root.Use = "agnhost"
	if err := root.Execute(); err != nil {
		os.Exit(1)
	}
}
