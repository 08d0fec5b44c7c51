// Package guestinfo serves what a VMI's guest agent says of its guest: the subresources
// virtualmachineinstances/guestosinfo, userlist and filesystemlist (GET, KubeVirt's types and
// answers: 409 "VMI does not have guest agent connected" without an agent). It asks the node
// agent of the VMI's node over mutual TLS, which asks the launcher, whose libvirtd talks to
// the agent. Authorization (get on the subresource) happened in the server's filters.
package guestinfo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/rest"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/internal/nodeagentapi"
	"github.com/vireo-dev/vireo/registry/agentclient"
	"github.com/vireo-dev/vireo/registry/storeutil"
)

// The subresources.
const (
	GuestOSInfo    = "guestosinfo"
	UserList       = "userlist"
	FileSystemList = "filesystemlist"
)

// Names lists the subresources.
var Names = []string{GuestOSInfo, UserList, FileSystemList}

// maxAnswer bounds the node agent's answer read back (a guest with many filesystems and
// users says a few KiB).
const maxAnswer = 1 << 20

// agentTimeout bounds the node agent's answer (which bounds the launcher's at 30 s).
const agentTimeout = 40 * time.Second

// Getter reads VMIs (the VMI store).
type Getter = storeutil.Getter

// REST is one guest agent subresource of virtualmachineinstances.
type REST struct {
	storeutil.VMIReader
	name   string
	vmis   Getter
	agents *agentclient.Client
}

// New returns the subresource name (GuestOSInfo, UserList or FileSystemList) of the VMIs in vmis.
func New(name string, vmis Getter, agents *agentclient.Client) *REST {
	return &REST{name: name, vmis: vmis, agents: agents}
}

var _ rest.Connecter = &REST{}

// Connect checks the VMI (404 unknown, 409 not running or without agent) and answers.
func (r *REST) Connect(ctx context.Context, name string, _ runtime.Object, responder rest.Responder) (http.Handler, error) {
	vmi, err := storeutil.Get[*v1.VirtualMachineInstance](ctx, r.vmis, name)
	if err != nil {
		return nil, err
	}
	if err := agentReachable(vmi); err != nil {
		return nil, err
	}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		info, err := r.ask(req.Context(), vmi)
		if err != nil {
			responder.Error(err)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(Answer(r.name, info))
	}), nil
}

// agentReachable refuses a VMI that does not run or whose agent is not connected, as KubeVirt
// does (409).
func agentReachable(vmi *v1.VirtualMachineInstance) error {
	gr := v1.Resource("virtualmachineinstance")
	if vmi.Status.Phase != v1.Running {
		return apierrors.NewConflict(gr, vmi.Name, fmt.Errorf("VMI is not running (phase %q)", vmi.Status.Phase))
	}
	for _, c := range vmi.Status.Conditions {
		if c.Type == v1.VirtualMachineInstanceAgentConnected && c.Status == v1.ConditionTrue {
			return nil
		}
	}
	return apierrors.NewConflict(gr, vmi.Name, errors.New("VMI does not have guest agent connected"))
}

// Answer is the subresource name's answer made of info: the info itself for guestosinfo, its
// users or filesystems as KubeVirt's lists for userlist and filesystemlist.
func Answer(name string, info *v1.VirtualMachineInstanceGuestAgentInfo) runtime.Object {
	switch name {
	case UserList:
		list := &v1.VirtualMachineInstanceGuestOSUserList{Items: info.UserList}
		list.APIVersion, list.Kind = v1.SchemeGroupVersion.String(), "VirtualMachineInstanceGuestOSUserList"
		if list.Items == nil {
			list.Items = []v1.VirtualMachineInstanceGuestOSUser{}
		}
		return list
	case FileSystemList:
		list := &v1.VirtualMachineInstanceFileSystemList{Items: info.FSInfo.Filesystems}
		list.APIVersion, list.Kind = v1.SchemeGroupVersion.String(), "VirtualMachineInstanceFileSystemList"
		if list.Items == nil {
			list.Items = []v1.VirtualMachineInstanceFileSystem{}
		}
		return list
	}
	info.APIVersion, info.Kind = v1.SchemeGroupVersion.String(), "VirtualMachineInstanceGuestAgentInfo"
	return info
}

// ask asks the node agent of the VMI's node for the guest info of this VMI (its UID).
func (r *REST) ask(ctx context.Context, vmi *v1.VirtualMachineInstance) (*v1.VirtualMachineInstanceGuestAgentInfo, error) {
	loc, err := r.agents.Location(vmi.Status.NodeName, nodeagentapi.VMIPath(vmi.Namespace, vmi.Name, nodeagentapi.GuestInfo), url.Values{"uid": {string(vmi.UID)}})
	if err != nil {
		return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("cannot ask the guest agent of VMI %s/%s: %v", vmi.Namespace, vmi.Name, err))
	}
	ctx, cancel := context.WithTimeout(ctx, agentTimeout)
	defer cancel()
	out, err := http.NewRequestWithContext(ctx, http.MethodGet, loc.String(), nil)
	if err != nil {
		return nil, err
	}
	resp, err := (&http.Client{Transport: r.agents.Transport()}).Do(out)
	if err != nil {
		return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("cannot ask the guest agent of VMI %s/%s: the node agent of node %s: %v", vmi.Namespace, vmi.Name, vmi.Status.NodeName, err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("reading the node agent's answer: %v", err))
	}
	msg := strings.TrimSpace(string(body))
	switch resp.StatusCode {
	case http.StatusOK:
		info := &v1.VirtualMachineInstanceGuestAgentInfo{}
		if err := json.Unmarshal(body, info); err != nil {
			return nil, apierrors.NewInternalError(fmt.Errorf("the node agent's guest info: %w", err))
		}
		return info, nil
	case http.StatusNotFound:
		return nil, apierrors.NewNotFound(v1.Resource("virtualmachineinstances"), vmi.Name)
	case http.StatusConflict:
		return nil, apierrors.NewConflict(v1.Resource("virtualmachineinstance"), vmi.Name, errors.New(msg))
	}
	return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("the guest agent of VMI %s/%s: %s", vmi.Namespace, vmi.Name, msg))
}
