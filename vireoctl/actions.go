package vireoctl

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// newVMActionCommand is `vireoctl start|stop|restart VM`: a PUT of the action's options to the
// VM's subresource at KubeVirt's path, as virtctl sends it.
func newVMActionCommand(action string, flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	var dryRun, paused, force bool
	var grace int64 = -1
	cmd := &cobra.Command{
		Use:               action + " VM",
		Short:             map[string]string{"start": "Start a VirtualMachine", "stop": "Stop a VirtualMachine", "restart": "Restart a VirtualMachine"}[action],
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: nameCompletion(flags, completeVMs),
		RunE: func(c *cobra.Command, args []string) error {
			t, err := resolve(flags)
			if err != nil {
				return err
			}
			body, err := json.Marshal(actionOptions(action, dryRun, paused, force, grace))
			if err != nil {
				return err
			}
			if err := t.put(c.Context(), "virtualmachines", args[0], action, body); err != nil {
				return err
			}
			verb := map[string]string{"start": "started", "stop": "stopped", "restart": "restarted"}[action]
			if dryRun {
				verb += " (dry run)"
			}
			fmt.Fprintf(streams.Out, "VM %s was scheduled to be %s\n", args[0], verb)
			return nil
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "Check the request without changing the VM.")
	switch action {
	case "start":
		cmd.Flags().BoolVar(&paused, "paused", false, "Start the VM with its vCPUs paused.")
	case "stop", "restart":
		cmd.Flags().Int64Var(&grace, "grace-period", -1, "Seconds the guest gets to shut down (with --force); -1 keeps the VMI's.")
		cmd.Flags().BoolVar(&force, "force", false, "Use --grace-period instead of the VMI's termination grace period.")
	}
	return cmd
}

// actionOptions is KubeVirt's options body of an action.
func actionOptions(action string, dryRun, paused, force bool, grace int64) map[string]any {
	opts := map[string]any{}
	if dryRun {
		opts["dryRun"] = []string{"All"}
	}
	switch {
	case action == "start" && paused:
		opts["paused"] = true
	case action == "stop" && force && grace >= 0:
		opts["gracePeriod"] = grace
	case action == "restart" && force && grace >= 0:
		opts["gracePeriodSeconds"] = grace
	}
	return opts
}

// rest is a client for raw requests through kube-apiserver.
func (t *target) rest() (*rest.RESTClient, error) {
	cfg := rest.CopyConfig(t.cfg)
	cfg.APIPath = "/apis"
	cfg.ContentConfig = rest.ContentConfig{NegotiatedSerializer: scheme.Codecs.WithoutConversion()}
	return rest.UnversionedRESTClientFor(cfg)
}

// resolveREST is resolve with a raw REST client.
func resolveREST(flags *genericclioptions.ConfigFlags) (*target, *rest.RESTClient, error) {
	t, err := resolve(flags)
	if err != nil {
		return nil, nil, err
	}
	client, err := t.rest()
	return t, client, err
}

// put sends a PUT to a subresource at subresources.kubevirt.io/v1 and returns the server's
// refusal as an error.
func (t *target) put(ctx context.Context, resource, name, subresource string, body []byte) error {
	client, err := t.rest()
	if err != nil {
		return err
	}
	return client.Put().AbsPath("/apis/subresources.kubevirt.io/v1/namespaces", t.namespace, resource, name, subresource).
		Body(body).SetHeader("Content-Type", "application/json").Do(orBackground(ctx)).Error()
}

// get reads an object of kubevirt.io/v1, for its existence.
func (t *target) get(ctx context.Context, resource, name string) error {
	client, err := t.rest()
	if err != nil {
		return err
	}
	return client.Get().AbsPath("/apis/kubevirt.io/v1/namespaces", t.namespace, resource, name).Do(orBackground(ctx)).Error()
}

func orBackground(ctx context.Context) context.Context {
	if ctx == nil {
		return context.Background()
	}
	return ctx
}
