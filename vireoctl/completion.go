package vireoctl

import (
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/vireo-dev/vireo/generated/clientset/versioned"
)

// Resources whose names the shell completes.
const (
	completeVMs  = "virtualmachines"
	completeVMIs = "virtualmachineinstances"
)

// nameCompletion completes the one NAME argument of a command from the objects of resource in
// the namespace of the flags (shell completion: `vireoctl completion bash`).
func nameCompletion(flags *genericclioptions.ConfigFlags, resource string) cobra.CompletionFunc {
	return func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) != 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return names(c, flags, resource, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

// kindNameCompletion completes `(vm|vmi) NAME`.
func kindNameCompletion(flags *genericclioptions.ConfigFlags) cobra.CompletionFunc {
	return func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		switch len(args) {
		case 0:
			return []cobra.Completion{"vm", "vmi"}, cobra.ShellCompDirectiveNoFileComp
		case 1:
			resource := completeVMIs
			if strings.EqualFold(args[0], "vm") || strings.EqualFold(args[0], "virtualmachine") {
				resource = completeVMs
			}
			return names(c, flags, resource, toComplete), cobra.ShellCompDirectiveNoFileComp
		}
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
}

// names lists the objects of resource whose names start with prefix; nothing when the cluster
// cannot be reached (completion never fails loudly).
func names(c *cobra.Command, flags *genericclioptions.ConfigFlags, resource, prefix string) []cobra.Completion {
	t, err := resolve(flags)
	if err != nil {
		return nil
	}
	cs, err := versioned.NewForConfig(t.cfg)
	if err != nil {
		return nil
	}
	var all []string
	ctx := orBackground(c.Context())
	switch resource {
	case completeVMs:
		list, err := cs.KubevirtV1().VirtualMachines(t.namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil
		}
		for _, o := range list.Items {
			all = append(all, o.Name)
		}
	case completeVMIs:
		list, err := cs.KubevirtV1().VirtualMachineInstances(t.namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil
		}
		for _, o := range list.Items {
			all = append(all, o.Name)
		}
	}
	var out []cobra.Completion
	for _, n := range all {
		if strings.HasPrefix(n, prefix) {
			out = append(out, n)
		}
	}
	return out
}
