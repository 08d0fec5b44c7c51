package vmiaction

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/rest"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/internal/nodeagentapi"
	"github.com/vireo-dev/vireo/registry/agentclient"
	"github.com/vireo-dev/vireo/registry/storeutil"
)

// maxAnswer bounds the node agent's answer read back.
const maxAnswer = 4 << 10

// agentTimeout bounds the node agent's answer (which bounds the launcher's at 30 s).
const agentTimeout = 40 * time.Second

// Getter reads VMIs (the VMI store).
type Getter interface {
	Get(ctx context.Context, name string, opts *metav1.GetOptions) (runtime.Object, error)
}

// REST is one action subresource of virtualmachineinstances.
type REST struct {
	storeutil.PutAction
	action string
	vmis   Getter
	agents *agentclient.Client
}

// New returns the action subresource (Pause, Unpause or SoftReboot) of the VMIs in vmis.
func New(action string, vmis Getter, agents *agentclient.Client) *REST {
	r := &REST{action: action, vmis: vmis, agents: agents}
	// 200 once the launcher acted (KubeVirt's answer); the VMI's status follows the guest.
	r.PutAction = storeutil.PutAction{Object: func() runtime.Object { return &v1.VirtualMachineInstance{} }, Success: http.StatusOK, Serve: r.serve}
	return r
}

var _ rest.Connecter = &REST{}

func (r *REST) serve(ctx context.Context, name string, req *http.Request) error {
	opts, err := r.decode(req)
	if err != nil {
		return err
	}
	vmi, err := storeutil.Get[*v1.VirtualMachineInstance](ctx, r.vmis, name)
	if err != nil {
		return err
	}
	dryRun, err := storeutil.DryRun(r.action, opts.DryRun)
	if err != nil {
		return err
	}
	if err := Check(r.action, vmi, dryRun); err != nil || dryRun {
		return err
	}
	query := url.Values{"uid": {string(vmi.UID)}}
	if r.action == Freeze {
		timeout := DefaultUnfreezeTimeout
		if opts.UnfreezeTimeout != nil {
			timeout = opts.UnfreezeTimeout.Duration
		}
		query.Set(nodeagentapi.UnfreezeTimeoutParam, timeout.String())
	}
	return r.callAgent(ctx, vmi, query)
}

// decode reads the options body (empty means none).
func (r *REST) decode(req *http.Request) (Options, error) {
	var opts Options
	if err := storeutil.ReadOptions(req, r.action, optionsKind(r.action), &opts); err != nil {
		return opts, err
	}
	if _, err := storeutil.DryRun(r.action, opts.DryRun); err != nil {
		return opts, err
	}
	if t := opts.UnfreezeTimeout; t != nil && (r.action != Freeze || t.Duration <= 0) {
		return opts, apierrors.NewBadRequest(fmt.Sprintf("unfreezeTimeout %s: must be a positive duration such as 5m, and only freeze takes it", t.Duration))
	}
	return opts, nil
}

func optionsKind(action string) string {
	switch action {
	case Pause:
		return "PauseOptions"
	case Unpause:
		return "UnpauseOptions"
	case Freeze:
		return "FreezeUnfreezeTimeout"
	}
	return "options"
}

// callAgent asks the node agent of the VMI's node to carry the action out, for this VMI (its UID)
// only, and turns its answer into the API's.
func (r *REST) callAgent(ctx context.Context, vmi *v1.VirtualMachineInstance, query url.Values) error {
	loc, err := r.agents.Location(vmi.Status.NodeName, nodeagentapi.VMIPath(vmi.Namespace, vmi.Name, r.action), query)
	if err != nil {
		return apierrors.NewServiceUnavailable(fmt.Sprintf("cannot %s VMI %s/%s: %v", r.action, vmi.Namespace, vmi.Name, err))
	}
	ctx, cancel := context.WithTimeout(ctx, agentTimeout)
	defer cancel()
	out, err := http.NewRequestWithContext(ctx, http.MethodPut, loc.String(), nil)
	if err != nil {
		return err
	}
	resp, err := (&http.Client{Transport: r.agents.Transport()}).Do(out)
	if err != nil {
		return apierrors.NewServiceUnavailable(fmt.Sprintf("cannot %s VMI %s/%s: the node agent of node %s: %v", r.action, vmi.Namespace, vmi.Name, vmi.Status.NodeName, err))
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	msg := strings.TrimSpace(string(b))
	switch resp.StatusCode {
	case http.StatusOK:
		return nil
	case http.StatusNotFound:
		return apierrors.NewNotFound(v1.Resource("virtualmachineinstances"), vmi.Name)
	case http.StatusConflict:
		return conflict(vmi, msg)
	case http.StatusServiceUnavailable:
		return apierrors.NewServiceUnavailable(msg)
	}
	return apierrors.NewInternalError(fmt.Errorf("node agent of node %s answered %d: %s", vmi.Status.NodeName, resp.StatusCode, msg))
}
