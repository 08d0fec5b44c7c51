package vireoctl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/generated/clientset/versioned"
)

// hostnameLabel is the node label --node selects the target with.
const hostnameLabel = "kubernetes.io/hostname"

// newMigrateCommand is `vireoctl migrate VM`: PUT .../virtualmachines/VM/migrate with
// KubeVirt's MigrateOptions; the server creates the VirtualMachineInstanceMigration.
func newMigrateCommand(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	var dryRun bool
	var node string
	var selector map[string]string
	cmd := &cobra.Command{
		Use:   "migrate VM",
		Short: "Live-migrate a running VirtualMachine (or a VMI without one) to another node (or, with --node naming its own node, to a new launcher there)",
		Example: `  vireoctl migrate demo
  vireoctl migrate demo --node vireo-local-1
  vireoctl migrate demo --dry-run`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: nameCompletion(flags, completeVMs),
		RunE: func(c *cobra.Command, args []string) error {
			body, err := migrateOptions(dryRun, node, selector)
			if err != nil {
				return err
			}
			t, err := resolve(flags)
			if err != nil {
				return err
			}
			kind, err := putMigrate(c.Context(), t, args[0], body)
			if err != nil {
				return err
			}
			fmt.Fprintf(streams.Out, "%s %s was scheduled to migrate%s\n", kind, args[0], dryRunSuffix(dryRun))
			return nil
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "Check the migration without starting it.")
	cmd.Flags().StringVar(&node, "node", "", "The node to migrate to (its "+hostnameLabel+" label); naming the VM's own node moves it to a new launcher there.")
	cmd.Flags().StringToStringVar(&selector, "added-node-selector", nil, "Node labels the target must have, key=value[,key=value]; narrows placement only (virtctl's --addedNodeSelector works too).")
	cmd.Flags().SetNormalizeFunc(virtctlFlagNames)
	return cmd
}

// putMigrate asks the VM's migrate subresource to migrate it. A VMI without a VM (which
// KubeVirt's virtctl refuses) migrates through its own migrate subresource. It returns the
// kind it migrated: "VM" or "VMI".
func putMigrate(ctx context.Context, t *target, name string, body []byte) (string, error) {
	err := t.put(ctx, "virtualmachines", name, "migrate", body)
	if !apierrors.IsNotFound(err) {
		return "VM", err
	}
	if getErr := t.get(ctx, "virtualmachineinstances", name); apierrors.IsNotFound(getErr) {
		return "", fmt.Errorf("found neither a VirtualMachine nor a VirtualMachineInstance %s in namespace %s", name, t.namespace)
	}
	return "VMI", t.put(ctx, "virtualmachineinstances", name, "migrate", body)
}

// virtctlFlagNames accepts virtctl's spelling of the migrate flags.
func virtctlFlagNames(_ *pflag.FlagSet, name string) pflag.NormalizedName {
	if name == "addedNodeSelector" {
		name = "added-node-selector"
	}
	return pflag.NormalizedName(name)
}

// migrateOptions is the body of the migrate subresource.
func migrateOptions(dryRun bool, node string, selector map[string]string) ([]byte, error) {
	added := map[string]string{}
	for k, v := range selector {
		added[k] = v
	}
	if node != "" {
		if v, ok := added[hostnameLabel]; ok && v != node {
			return nil, fmt.Errorf("--node %s and --added-node-selector %s=%s ask for different nodes", node, hostnameLabel, v)
		}
		added[hostnameLabel] = node
	}
	o := map[string]any{}
	if len(added) > 0 {
		o["addedNodeSelector"] = added
	}
	if dryRun {
		o["dryRun"] = []string{metav1.DryRunAll}
	}
	return json.Marshal(o)
}

// newMigrateCancelCommand is `vireoctl migrate-cancel VM`: it deletes the VM's migration in
// flight, which aborts it (the guest keeps running where it was).
func newMigrateCancelCommand(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:               "migrate-cancel VM",
		Short:             "Cancel a VirtualMachine's live migration in flight (the guest stays where it runs)",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: nameCompletion(flags, completeVMs),
		RunE: func(c *cobra.Command, args []string) error {
			t, err := resolve(flags)
			if err != nil {
				return err
			}
			cs, err := versioned.NewForConfig(t.cfg)
			if err != nil {
				return err
			}
			names, err := cancelMigrations(orBackground(c.Context()), cs, t.namespace, args[0])
			if err != nil {
				return err
			}
			fmt.Fprintf(streams.Out, "Migration of VM %s was cancelled (%s)\n", args[0], strings.Join(names, ", "))
			return nil
		},
	}
}

// cancelMigrations deletes the migrations of VMI name that have not ended and returns their
// names; none is an error.
func cancelMigrations(ctx context.Context, cs versioned.Interface, namespace, name string) ([]string, error) {
	list, err := cs.KubevirtV1().VirtualMachineInstanceMigrations(namespace).List(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("spec.vmiName", name).String()})
	if err != nil {
		return nil, fmt.Errorf("listing the migrations of %s/%s: %w", namespace, name, err)
	}
	var names []string
	for _, m := range list.Items {
		if m.Spec.VMIName != name || m.Status.Phase == v1.MigrationSucceeded || m.Status.Phase == v1.MigrationFailed || m.DeletionTimestamp != nil {
			continue
		}
		err := cs.KubevirtV1().VirtualMachineInstanceMigrations(namespace).Delete(ctx, m.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return names, fmt.Errorf("deleting migration %s: %w", m.Name, err)
		}
		names = append(names, m.Name)
	}
	if len(names) == 0 {
		return nil, errors.New("found no migration to cancel for " + namespace + "/" + name)
	}
	return names, nil
}
