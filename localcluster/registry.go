package localcluster

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/vireo-dev/vireo/localcluster/imageregistry"
)

// RegistryName is the registry's component name.
const RegistryName = "registry"

// RegistryAddress is where the installation's OCI registry listens (host:port, plain HTTP):
// the bridge's address, so the host and every local node's network namespace (and so every
// Pod) reach it; e.g. 10.250.0.1:5000 for the default installation.
func (c *Cluster) RegistryAddress() string {
	return net.JoinHostPort(c.opts.Network.HostIP.String(), strconv.Itoa(c.opts.Ports.RegistryPort()))
}

// ContainerDiskImage is the reference of a test guest's containerDisk in the registry, e.g.
// 10.250.0.1:5000/vireo/tiny-containerdisk:latest.
func (c *Cluster) ContainerDiskImage(guest string) string {
	return imageregistry.ContainerDiskImage(c.RegistryAddress(), guest)
}

// PrivateContainerDiskImage is the reference of a test guest's containerDisk in the registry's
// private repository, which needs RegistryCredentials, e.g.
// 10.250.0.1:5000/private/vireo/tiny-containerdisk:latest.
func (c *Cluster) PrivateContainerDiskImage(guest string) string {
	return imageregistry.PrivateContainerDiskImage(c.RegistryAddress(), guest)
}

// RegistryCredentials are the user and password of the registry's private repositories,
// generated per installation by the registry in Layout.RegistryCredentials.
func (c *Cluster) RegistryCredentials() (imageregistry.Credentials, error) {
	return imageregistry.ReadCredentials(c.abs(c.opts.Layout.RegistryCredentials()))
}

// registry is `vireo-local registry`: blobs under the data directory (kept across restarts),
// the guest images' containerDisks loaded on every start.
func (c *Cluster) registry() Component {
	l := &c.opts.Layout
	addr := c.RegistryAddress()
	args := []string{
		"registry",
		"--address", addr,
		"--storage", c.abs(l.Data(RegistryName)),
		"--images", c.abs(l.ImagesDir()),
		"--credentials-file", c.abs(l.RegistryCredentials()),
	}
	// The images deployed from last, so that their vireo/<name>:latest tags win.
	for _, dir := range append(append([]string(nil), l.AlsoServedOCI...), l.OCIDir()) {
		args = append(args, "--oci-images", c.abs(dir))
	}
	return Component{Name: RegistryName, Path: c.abs(l.Bin("vireo-local")), Dir: l, Args: args,
		Ready: registryReady("http://" + addr + "/v2/")}
}

// registryReady checks that the registry answers the version check as a registry does. It
// answers only once its images are loaded.
func registryReady(url string) func(context.Context) error {
	client := &http.Client{Timeout: 2 * time.Second}
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Docker-Distribution-API-Version") != "registry/2.0" {
			return fmt.Errorf("%s: HTTP %d, API version %q", url, resp.StatusCode, resp.Header.Get("Docker-Distribution-API-Version"))
		}
		return nil
	}
}
