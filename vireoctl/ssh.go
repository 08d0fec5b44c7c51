package vireoctl

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

type sshOptions struct {
	identityFile string
	username     string
	port         int
	knownHosts   string
	localOptions []string
	command      string
}

func newSSHCommand(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &sshOptions{port: 22}
	cmd := &cobra.Command{
		Use:   "ssh [USER@]TYPE/NAME[/NAMESPACE]",
		Short: "Open an SSH session to a VM's or VMI's guest with the local ssh client, through port-forward",
		Long: `Run the local ssh client against the guest, its connection carried by vireoctl
port-forward --stdio (ssh's ProxyCommand) through kube-apiserver: the guest needs no address
reachable from here. TYPE is vm or vmi.`,
		Example: `  vireoctl ssh root@vmi/tiny -i ~/.ssh/id_ed25519
  vireoctl ssh fedora@vm/web/prod -c 'uptime'
  vireoctl ssh root@vmi/tiny -t '-o StrictHostKeyChecking=no'`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			sshArgs, err := o.sshArgs(flags, args[0])
			if err != nil {
				return err
			}
			return runLocalClient(c.Context(), streams, "ssh", sshArgs)
		},
	}
	o.addFlags(cmd)
	cmd.Flags().StringVarP(&o.command, "command", "c", "", "Command to run in the guest instead of a login shell.")
	return cmd
}

// addFlags registers the flags ssh and scp share (virtctl's).
func (o *sshOptions) addFlags(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&o.identityFile, "identity-file", "i", "", "Private key to log in with (ssh -i).")
	cmd.Flags().StringVarP(&o.username, "username", "l", "", "Guest user to log in as, unless USER@ says.")
	cmd.Flags().IntVarP(&o.port, "port", "p", o.port, "The guest's SSH port.")
	cmd.Flags().StringVar(&o.knownHosts, "known-hosts", "", "known_hosts file for the guest's host key (ssh's UserKnownHostsFile; default ssh's own).")
	cmd.Flags().StringArrayVarP(&o.localOptions, "local-ssh-opts", "t", nil, "More options for the local ssh client, such as '-o StrictHostKeyChecking=no' (repeatable).")
}

// runLocalClient runs the local OpenSSH program (ssh or scp) with args on the user's terminal;
// its exit code becomes vireoctl's.
func runLocalClient(ctx context.Context, streams genericiooptions.IOStreams, program string, args []string) error {
	client := exec.CommandContext(orBackground(ctx), program, args...)
	client.Stdin, client.Stdout, client.Stderr = streams.In, streams.Out, streams.ErrOut
	err := client.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		// The client printed why; its exit code (the remote command's) is vireoctl's.
		os.Exit(exit.ExitCode())
	}
	if errors.Is(err, exec.ErrNotFound) {
		return fmt.Errorf("no %s on the PATH: install OpenSSH's client (Debian: openssh-client)", program)
	}
	return err
}

// sshArgs are the local ssh client's arguments for target ([USER@]TYPE/NAME[/NAMESPACE]).
func (o *sshOptions) sshArgs(flags *genericclioptions.ConfigFlags, target string) ([]string, error) {
	args, host, err := o.proxyArgs(flags, target)
	if err != nil {
		return nil, err
	}
	args = append(args, host)
	if o.command != "" {
		args = append(args, "--", o.command)
	}
	return args, nil
}

// proxyArgs are the options that make the local ssh (or scp) client reach target's guest
// through vireoctl port-forward --stdio, and the host name to give it: [USER@]TYPE.NAME.NS.
func (o *sshOptions) proxyArgs(flags *genericclioptions.ConfigFlags, target string) ([]string, string, error) {
	user, rest, hasUser := strings.Cut(target, "@")
	if !hasUser {
		user, rest = o.username, target
	} else if user == "" {
		return nil, "", fmt.Errorf("target %q: the user before '@' is empty", target)
	}
	resource, namespace, name, err := parseForwardTarget(rest)
	if err != nil {
		return nil, "", err
	}
	if o.port < 1 || o.port > 65535 {
		return nil, "", fmt.Errorf("--port %d must be from 1 to 65535", o.port)
	}
	if namespace == "" {
		if namespace, _, err = flags.ToRawKubeConfigLoader().Namespace(); err != nil {
			return nil, "", err
		}
	}
	self, err := os.Executable()
	if err != nil {
		return nil, "", fmt.Errorf("finding vireoctl for ssh's ProxyCommand: %w", err)
	}
	kind := "vmi"
	if resource == "virtualmachines" {
		kind = "vm"
	}
	proxy := []string{self}
	proxy = append(proxy, kubeconfigArgs(flags)...)
	proxy = append(proxy, "port-forward", "--stdio", kind+"/"+name+"/"+namespace, strconv.Itoa(o.port))
	quoted := make([]string, len(proxy))
	for i, a := range proxy {
		quoted[i] = shellQuote(a)
	}
	// The host's name for ssh (and its known_hosts entry): the guest, not an address.
	host := kind + "." + name + "." + namespace
	// ssh expands %-tokens in ProxyCommand: a literal % is %%.
	proxyCommand := strings.ReplaceAll(strings.Join(quoted, " "), "%", "%%")
	args := []string{"-o", "ProxyCommand=" + proxyCommand, "-o", "HostKeyAlias=" + host}
	if o.identityFile != "" {
		args = append(args, "-i", o.identityFile)
	}
	if o.knownHosts != "" {
		args = append(args, "-o", "UserKnownHostsFile="+o.knownHosts)
	}
	for _, opt := range o.localOptions {
		args = append(args, strings.Fields(opt)...)
	}
	if user != "" {
		host = user + "@" + host
	}
	return args, host, nil
}

// kubeconfigArgs repeats the kubeconfig flags the user gave, for the ProxyCommand's vireoctl.
func kubeconfigArgs(flags *genericclioptions.ConfigFlags) []string {
	var out []string
	for _, f := range []struct {
		name  string
		value *string
	}{
		{"kubeconfig", flags.KubeConfig}, {"context", flags.Context}, {"cluster", flags.ClusterName},
		{"user", flags.AuthInfoName}, {"server", flags.APIServer}, {"token", flags.BearerToken},
		{"certificate-authority", flags.CAFile}, {"client-certificate", flags.CertFile}, {"client-key", flags.KeyFile},
		{"as", flags.Impersonate},
	} {
		if f.value != nil && *f.value != "" {
			out = append(out, "--"+f.name+"="+*f.value)
		}
	}
	if flags.Insecure != nil && *flags.Insecure {
		out = append(out, "--insecure-skip-tls-verify")
	}
	return out
}

// shellQuote quotes s for /bin/sh, which runs ssh's ProxyCommand.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'"
}
