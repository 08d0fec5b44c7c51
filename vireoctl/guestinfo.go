package vireoctl

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// newGuestInfoCommand is `vireoctl guestosinfo|userlist|fslist NAME`, as virtctl spells them:
// what the VMI's guest agent says of the guest, printed as JSON.
func newGuestInfoCommand(use, subresource, short string, flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:               use + " NAME",
		Short:             short,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: nameCompletion(flags, completeVMIs),
		RunE: func(c *cobra.Command, args []string) error {
			t, client, err := resolveREST(flags)
			if err != nil {
				return err
			}
			raw, err := client.Get().AbsPath("/apis/subresources.kubevirt.io/v1/namespaces", t.namespace, "virtualmachineinstances", args[0], subresource).
				Do(c.Context()).Raw()
			if err != nil {
				return err
			}
			var out bytes.Buffer
			if err := json.Indent(&out, raw, "", "  "); err != nil {
				return fmt.Errorf("the server's %s answer is not JSON: %w", subresource, err)
			}
			_, err = fmt.Fprintln(streams.Out, out.String())
			return err
		},
	}
}

// guestInfoCommands are the guest agent's commands.
func guestInfoCommands(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) []*cobra.Command {
	return []*cobra.Command{
		newGuestInfoCommand("guestosinfo", "guestosinfo", "Print what the guest agent of a VirtualMachineInstance says of its guest (OS, host name, users, filesystems)", flags, streams),
		newGuestInfoCommand("userlist", "userlist", "Print the users logged in to the guest of a VirtualMachineInstance (guest agent)", flags, streams),
		newGuestInfoCommand("fslist", "filesystemlist", "Print the filesystems mounted in the guest of a VirtualMachineInstance (guest agent)", flags, streams),
	}
}
