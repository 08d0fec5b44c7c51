package localcluster

import (
	"fmt"
	"path/filepath"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// kubeconfigPath is the kubeconfig of a component (its client certificate).
func (c *Cluster) kubeconfigPath(component string) string {
	return filepath.Join(c.opts.Root, "kubeconfigs", component+".kubeconfig")
}

// writeKubeconfigs writes the admin kubeconfig and one per component, all pointing at
// kube-apiserver's one listening address (vireo-apiserver, in the network namespace,
// reaches it over the link; host processes at the host's own end of it).
func (c *Cluster) writeKubeconfigs() error {
	files := []struct{ path, cert string }{
		{c.opts.Kubeconfig(), "admin"},
		{c.kubeconfigPath("kube-controller-manager"), "kube-controller-manager"},
		{c.kubeconfigPath("kube-scheduler"), "kube-scheduler"},
		{c.kubeconfigPath("kube-proxy"), "kube-proxy"},
	}
	for _, name := range c.NodeNames() {
		files = append(files, struct{ path, cert string }{c.kubeconfigPath(name), "node-" + name + "-client"})
	}
	for _, f := range files {
		if err := c.writeKubeconfig(f.path, c.KubeAPIServerURL(), f.cert); err != nil {
			return fmt.Errorf("writing %s: %w", f.path, err)
		}
	}
	return nil
}

func (c *Cluster) writeKubeconfig(path, server, cert string) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["vireo-local"] = &clientcmdapi.Cluster{Server: server, CertificateAuthority: c.pkiFile("ca.crt")}
	cfg.AuthInfos[cert] = &clientcmdapi.AuthInfo{ClientCertificate: c.pkiFile(cert + ".crt"), ClientKey: c.pkiFile(cert + ".key")}
	cfg.Contexts["vireo-local"] = &clientcmdapi.Context{Cluster: "vireo-local", AuthInfo: cert, Namespace: "default"}
	cfg.CurrentContext = "vireo-local"
	return clientcmd.WriteToFile(*cfg, path)
}

// RESTConfig reads the admin kubeconfig.
func (c *Cluster) RESTConfig() (*rest.Config, error) {
	return clientcmd.BuildConfigFromFlags("", c.opts.Kubeconfig())
}

// UserConfig is a client configuration for another user authenticated by a client
// certificate of the installation's CA, issued on first use. It is safe for concurrent use.
func (c *Cluster) UserConfig(user string, groups []string) (*rest.Config, error) {
	c.issuing.Lock()
	defer c.issuing.Unlock()
	if err := c.loadCA(); err != nil {
		return nil, err
	}
	issued, err := c.ca.ClientCert("user-"+user, user, groups)
	if err != nil {
		return nil, err
	}
	cfg, err := c.RESTConfig()
	if err != nil {
		return nil, err
	}
	cfg.CertFile, cfg.KeyFile = issued.CertFile, issued.KeyFile
	cfg.CertData, cfg.KeyData = nil, nil
	return cfg, nil
}
