// Command agnhost is the part of Kubernetes' e2e test image agnhost that Vireo's tests use
// (netexec, serve-hostname, connect), built into the image vireo/agnhost (make oci) that
// vireo-local's registry serves.
package main

import "os"

func main() {
	if err := command().Execute(); err != nil {
		os.Exit(1)
	}
}
