package datavolume

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	cdiv1beta1 "github.com/vireo-dev/vireo/apis/cdi/v1beta1"
	"github.com/vireo-dev/vireo/registry/storeutil"
)

// CloneSources checks, with CDI's rule, that the user creating a DataVolume (or a VM with
// dataVolumeTemplates) may read the claim it clones from another namespace: create on
// datavolumes/source in the source namespace (kubevirt.io:edit grants it). Without this a user
// could copy any claim of any namespace through the importer, which runs with the controller's
// reach. A nil authorizer checks nothing (a server without delegated authorization).
type CloneSources struct {
	Authorizer authorizer.Authorizer
}

// Check returns the error of spec's source (at path) when it clones a claim of another
// namespace than ns that the request's user may not read. Vireo's components are not asked:
// vireo-controller creates the DataVolumes of a VM, whose user was asked when the VM was
// written.
func (c CloneSources) Check(ctx context.Context, ns string, spec *cdiv1beta1.DataVolumeSpec, path *field.Path) field.ErrorList {
	if c.Authorizer == nil || spec.Source == nil || spec.Source.PVC == nil {
		return nil
	}
	source := spec.Source.PVC.Namespace
	if source == "" || source == ns {
		return nil
	}
	user, ok := genericapirequest.UserFrom(ctx)
	if !ok || storeutil.IsVireoComponent(ctx) {
		return nil
	}
	attrs := authorizer.AttributesRecord{User: user, Verb: "create", APIGroup: cdiv1beta1.GroupName, APIVersion: cdiv1beta1.SchemeGroupVersion.Version,
		Resource: "datavolumes", Subresource: "source", Namespace: source, ResourceRequest: true}
	decision, reason, err := c.Authorizer.Authorize(ctx, attrs)
	if decision == authorizer.DecisionAllow {
		return nil
	}
	msg := fmt.Sprintf("user %q may not clone claims of namespace %q: cloning across namespaces needs create on datavolumes/source (cdi.kubevirt.io) there", user.GetName(), source)
	if reason != "" {
		msg += " (" + reason + ")"
	}
	if err != nil {
		msg += fmt.Sprintf(" (authorization failed: %v)", err)
	}
	return field.ErrorList{field.Forbidden(path.Child("source", "pvc", "namespace"), msg)}
}
