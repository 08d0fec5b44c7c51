// Package vireoctl is the vireoctl command line: the standard kubeconfig flags (client-go's
// genericclioptions) and the subcommands that reach Vireo's subresources through kube-apiserver.
package vireoctl

import (
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/gorilla/websocket"
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

// NewCommand is vireoctl's root command.
func NewCommand(streams genericiooptions.IOStreams) *cobra.Command {
	flags := genericclioptions.NewConfigFlags(true)
	root := &cobra.Command{
		Use:           "vireoctl",
		Short:         "Reach Vireo's virtual machines: serial console, VNC, port-forward, ssh, start, stop, restart, pause, soft-reboot, migrate, image upload and a web console",
		SilenceUsage:  true,
		SilenceErrors: false,
	}
	flags.AddFlags(root.PersistentFlags())
	root.AddCommand(newConsoleCommand(flags, streams), newVNCCommand(flags, streams), newPortForwardCommand(flags, streams), newSSHCommand(flags, streams), newSCPCommand(flags, streams))
	for _, action := range []string{"start", "stop", "restart"} {
		root.AddCommand(newVMActionCommand(action, flags, streams))
	}
	root.AddCommand(newPauseCommand("pause", flags, streams), newPauseCommand("unpause", flags, streams),
		newSoftRebootCommand(flags, streams), newResetCommand(flags, streams), newFreezeCommand(flags, streams), newUnfreezeCommand(flags, streams), newVersionCommand(flags, streams))
	root.AddCommand(guestInfoCommands(flags, streams)...)
	root.AddCommand(newImageUploadCommand(flags, streams))
	root.AddCommand(newMigrateCommand(flags, streams), newMigrateCancelCommand(flags, streams))
	root.AddCommand(newUICommand(flags, streams))
	return root
}

// target is what a subcommand needs to reach a VMI's subresource.
type target struct {
	cfg       *rest.Config
	namespace string
}

func resolve(flags *genericclioptions.ConfigFlags) (*target, error) {
	cfg, err := flags.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	ns, _, err := flags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return nil, err
	}
	return &target{cfg: cfg, namespace: ns}, nil
}

// subprotocol is KubeVirt's websocket subprotocol for console and VNC.
const subprotocol = v1.PlainStreamProtocolName

// dial opens the websocket of a VMI's subresource (console, vnc) through kube-apiserver at
// KubeVirt's path. It authenticates with the kubeconfig's client certificate or bearer token
// (exec and auth-provider plugins are not supported yet). On refusal it returns the HTTP status.
func (t *target) dial(name, subresource string) (*websocket.Conn, int, error) {
	return t.dialResource("virtualmachineinstances", name, subresource)
}

// dialResource opens the websocket at path (subresource[/more]) of a VMI or VM (resource
// "virtualmachineinstances" or "virtualmachines"), as dial does.
func (t *target) dialResource(resource, name, path string) (*websocket.Conn, int, error) {
	subresource, _, _ := strings.Cut(path, "/")
	tlsCfg, err := rest.TLSConfigFor(t.cfg)
	if err != nil {
		return nil, 0, err
	}
	header := http.Header{}
	token := t.cfg.BearerToken
	if token == "" && t.cfg.BearerTokenFile != "" {
		b, err := os.ReadFile(t.cfg.BearerTokenFile)
		if err != nil {
			return nil, 0, err
		}
		token = strings.TrimSpace(string(b))
	}
	if token != "" {
		header.Set("Authorization", "Bearer "+token)
	}
	if t.cfg.Username != "" {
		req, _ := http.NewRequest(http.MethodGet, "/", nil)
		req.SetBasicAuth(t.cfg.Username, t.cfg.Password)
		header.Set("Authorization", req.Header.Get("Authorization"))
	}
	if u := t.cfg.Impersonate.UserName; u != "" {
		header.Set("Impersonate-User", u)
		for _, g := range t.cfg.Impersonate.Groups {
			header.Add("Impersonate-Group", g)
		}
	}
	host := strings.TrimSuffix(t.cfg.Host, "/")
	switch {
	case strings.HasPrefix(host, "https://"):
		host = "wss://" + strings.TrimPrefix(host, "https://")
	case strings.HasPrefix(host, "http://"):
		host = "ws://" + strings.TrimPrefix(host, "http://")
	default:
		host = "wss://" + host
	}
	u := fmt.Sprintf("%s/apis/subresources.kubevirt.io/v1/namespaces/%s/%s/%s/%s", host, t.namespace, resource, name, path)
	d := websocket.Dialer{TLSClientConfig: tlsCfg, Subprotocols: []string{subprotocol}, Proxy: http.ProxyFromEnvironment}
	ws, resp, err := d.Dial(u, header)
	if err != nil {
		if resp != nil {
			defer resp.Body.Close()
			body := make([]byte, 4096)
			n, _ := resp.Body.Read(body)
			return nil, resp.StatusCode, fmt.Errorf("%s of %s %s/%s: %s: %s", subresource, kindName(resource), t.namespace, name, resp.Status, serverMessage(body[:n]))
		}
		return nil, 0, fmt.Errorf("%s of %s %s/%s: %w", subresource, kindName(resource), t.namespace, name, err)
	}
	return ws, http.StatusSwitchingProtocols, nil
}

// kindName is how messages name a resource: VM or VMI.
func kindName(resource string) string {
	if resource == "virtualmachines" {
		return "VM"
	}
	return "VMI"
}
