package vireoctl

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// newPauseCommand is `vireoctl pause|unpause vm|vmi NAME`: a PUT to the VMI's subresource. For a
// VM it acts on the VM's VMI, which has the VM's name, as virtctl does.
func newPauseCommand(action string, flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	var dryRun bool
	what := map[string]string{"pause": "Pause", "unpause": "Unpause"}[action]
	cmd := &cobra.Command{
		Use:   action + " (vm|vmi) NAME",
		Short: what + " the guest of a VirtualMachine or VirtualMachineInstance",
		Long: what + " the guest's vCPUs. `" + action + " vm NAME` acts on the running instance of the VirtualMachine NAME, " +
			"`" + action + " vmi NAME` on the VirtualMachineInstance NAME.",
		Example:           "  vireoctl " + action + " vm demo\n  vireoctl " + action + " vmi demo --dry-run",
		Args:              pauseArgs,
		ValidArgsFunction: kindNameCompletion(flags),
		RunE: func(c *cobra.Command, args []string) error {
			t, err := resolve(flags)
			if err != nil {
				return err
			}
			kind, name := strings.ToLower(args[0]), args[1]
			if kind == "vm" || kind == "virtualmachine" {
				if err := t.get(c.Context(), "virtualmachines", name); err != nil {
					return fmt.Errorf("VM %s/%s: %w", t.namespace, name, err)
				}
			}
			body, err := json.Marshal(dryRunOptions(dryRun))
			if err != nil {
				return err
			}
			if err := t.put(c.Context(), "virtualmachineinstances", name, action, body); err != nil {
				if apierrors.IsNotFound(err) && (kind == "vm" || kind == "virtualmachine") {
					return fmt.Errorf("VM %s/%s has no VMI to %s: start it first (vireoctl start %s)", t.namespace, name, action, name)
				}
				return err
			}
			fmt.Fprintf(streams.Out, "VMI %s was scheduled to %s%s\n", name, action, dryRunSuffix(dryRun))
			return nil
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "Check the request without changing the guest.")
	return cmd
}

// pauseArgs wants a kind (vm or vmi) and a name.
func pauseArgs(_ *cobra.Command, args []string) error {
	if len(args) != 2 {
		return fmt.Errorf("want a kind and a name, as in `vm demo` or `vmi demo`; got %d arguments", len(args))
	}
	switch strings.ToLower(args[0]) {
	case "vm", "vmi", "virtualmachine", "virtualmachineinstance":
		return nil
	}
	return fmt.Errorf("unknown kind %q: use vm or vmi", args[0])
}

// newSoftRebootCommand is `vireoctl soft-reboot NAME` (also `softreboot`): the guest reboots
// through its ACPI power button, in the same VMI.
func newSoftRebootCommand(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	cmd := newGuestActionCommand(flags, streams, "softreboot", "was scheduled to soft-reboot")
	cmd.Use, cmd.Aliases = "soft-reboot NAME", []string{"softreboot"}
	cmd.Short = "Reboot the guest of a VirtualMachineInstance through ACPI, keeping the VMI"
	cmd.Flag("dry-run").Usage = "Check the request without rebooting the guest."
	return cmd
}

// newResetCommand is `vireoctl reset NAME`: the machine is reset like its reset button, at
// once, with no guest shutdown and no guest agent needed, in the same VMI.
func newResetCommand(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	cmd := newGuestActionCommand(flags, streams, "reset", "was reset")
	cmd.Use = "reset NAME"
	cmd.Short = "Reset the machine of a VirtualMachineInstance at once (a hard reset), keeping the VMI"
	cmd.Flag("dry-run").Usage = "Check the request without resetting the guest."
	return cmd
}

// newFreezeCommand is `vireoctl freeze NAME` (`--unfreeze-timeout`, as virtctl): the guest's
// filesystems are frozen through its agent until `vireoctl unfreeze NAME` or the timeout.
func newFreezeCommand(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:               "freeze NAME",
		Short:             "Freeze the filesystems of a VirtualMachineInstance's guest through its guest agent",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: nameCompletion(flags, completeVMIs),
		RunE: func(c *cobra.Command, args []string) error {
			t, err := resolve(flags)
			if err != nil {
				return err
			}
			body, err := json.Marshal(map[string]string{"unfreezeTimeout": timeout.String()})
			if err != nil {
				return err
			}
			if err := t.put(c.Context(), "virtualmachineinstances", args[0], "freeze", body); err != nil {
				return err
			}
			fmt.Fprintf(streams.Out, "VMI %s was scheduled to freeze (thawed after %s unless unfrozen first)\n", args[0], timeout)
			return nil
		},
	}
	cmd.Flags().DurationVar(&timeout, "unfreeze-timeout", 5*time.Minute, "Thaw the filesystems after this long if no unfreeze came first.")
	return cmd
}

// newUnfreezeCommand is `vireoctl unfreeze NAME`.
func newUnfreezeCommand(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	cmd := newGuestActionCommand(flags, streams, "unfreeze", "was scheduled to unfreeze")
	cmd.Use = "unfreeze NAME"
	cmd.Short = "Thaw the filesystems of a VirtualMachineInstance's guest through its guest agent"
	return cmd
}

// newGuestActionCommand is a command that PUTs the VMI subresource action and says done.
func newGuestActionCommand(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams, action, done string) *cobra.Command {
	var dryRun bool
	cmd := &cobra.Command{
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: nameCompletion(flags, completeVMIs),
		RunE: func(c *cobra.Command, args []string) error {
			t, err := resolve(flags)
			if err != nil {
				return err
			}
			body, err := json.Marshal(dryRunOptions(dryRun))
			if err != nil {
				return err
			}
			if err := t.put(c.Context(), "virtualmachineinstances", args[0], action, body); err != nil {
				return err
			}
			fmt.Fprintf(streams.Out, "VMI %s %s%s\n", args[0], done, dryRunSuffix(dryRun))
			return nil
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "Check the request without acting on the guest.")
	return cmd
}

func dryRunOptions(dryRun bool) map[string]any {
	if dryRun {
		return map[string]any{"dryRun": []string{"All"}}
	}
	return map[string]any{}
}

func dryRunSuffix(dryRun bool) string {
	if dryRun {
		return " (dry run)"
	}
	return ""
}
