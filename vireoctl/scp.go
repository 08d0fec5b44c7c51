package vireoctl

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

type scpOptions struct {
	sshOptions
	recursive, preserve bool
}

func newSCPCommand(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	o := &scpOptions{sshOptions: sshOptions{port: 22}}
	cmd := &cobra.Command{
		Use:   "scp SOURCE DESTINATION",
		Short: "Copy files to or from a VM's or VMI's guest with the local scp client, through port-forward",
		Long: `Run the local scp client with one side in the guest, written [USER@]TYPE/NAME[/NAMESPACE]:PATH
(TYPE is vm or vmi); the connection is carried by vireoctl port-forward --stdio through
kube-apiserver, as for vireoctl ssh.`,
		Example: `  vireoctl scp -i ~/.ssh/id_ed25519 notes.txt root@vmi/tiny:/tmp/
  vireoctl scp -r fedora@vm/web/prod:/var/log/app ./logs`,
		Args: cobra.ExactArgs(2),
		RunE: func(c *cobra.Command, args []string) error {
			scpArgs, err := o.scpArgs(flags, args[0], args[1])
			if err != nil {
				return err
			}
			return runLocalClient(c.Context(), streams, "scp", scpArgs)
		},
	}
	o.addFlags(cmd)
	cmd.Flags().BoolVarP(&o.recursive, "recursive", "r", false, "Copy directories recursively.")
	cmd.Flags().BoolVar(&o.preserve, "preserve", false, "Keep the files' modification times and modes.")
	return cmd
}

// scpArgs are the local scp client's arguments: exactly one of src and dst names the guest.
func (o *scpOptions) scpArgs(flags *genericclioptions.ConfigFlags, src, dst string) ([]string, error) {
	srcTarget, srcPath, srcRemote := splitRemote(src)
	dstTarget, dstPath, dstRemote := splitRemote(dst)
	switch {
	case srcRemote && dstRemote:
		return nil, errors.New("both SOURCE and DESTINATION name a guest: one must be a local path")
	case !srcRemote && !dstRemote:
		return nil, fmt.Errorf("neither %q nor %q names a guest: write one as [USER@]TYPE/NAME[/NAMESPACE]:PATH, such as root@vmi/tiny:/tmp", src, dst)
	}
	target, path := srcTarget, srcPath
	if dstRemote {
		target, path = dstTarget, dstPath
	}
	args, host, err := o.proxyArgs(flags, target)
	if err != nil {
		return nil, err
	}
	if o.recursive {
		args = append(args, "-r")
	}
	if o.preserve {
		args = append(args, "-p")
	}
	remote := host + ":" + path
	if srcRemote {
		return append(args, "--", remote, dst), nil
	}
	return append(args, "--", src, remote), nil
}

// splitRemote splits [USER@]TYPE/NAME[/NAMESPACE]:PATH; remote is false for a local path (no
// "vm/" or "vmi/" before the first ':').
func splitRemote(arg string) (target, path string, remote bool) {
	before, after, ok := strings.Cut(arg, ":")
	if !ok {
		return "", "", false
	}
	resource := before
	if _, r, hasUser := strings.Cut(before, "@"); hasUser {
		resource = r
	}
	if !strings.HasPrefix(resource, "vm/") && !strings.HasPrefix(resource, "vmi/") {
		return "", "", false
	}
	return before, after, true
}
