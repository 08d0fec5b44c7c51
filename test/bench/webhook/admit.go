package webhook

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"

	admissionv1 "k8s.io/api/admission/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/vireo-dev/vireo/apis/core/install"
	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/apis/core/validation"
	vmiregistry "github.com/vireo-dev/vireo/registry/vmi"
)

// Admitter decides admission requests for VirtualMachineInstance custom resources with
// Vireo's own defaulting and validation, as KubeVirt's virt-api does for its CRDs.
type Admitter struct {
	scheme *runtime.Scheme
}

// ComponentUser is the identity the webhooks treat as KubeVirt's own controller, as KubeVirt's
// admitters treat its service accounts: it may write a VMI's status through an update (the
// CRD has no status subresource) and set the labels reserved for the components.
const ComponentUser = "system:serviceaccount:kubevirt:kubevirt-controller"

// NewAdmitter builds the scheme that converts between kubevirt.io/v1 and the internal types.
func NewAdmitter() *Admitter {
	scheme := runtime.NewScheme()
	install.Install(scheme)
	return &Admitter{scheme: scheme}
}

// Mutate defaults a VMI on CREATE (what Vireo's registry does before storing it) and, on UPDATE,
// reverts status changes (users may not write a VMI's status). It answers with a JSON Patch.
func (a *Admitter) Mutate(req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	var ops []Operation
	var err error
	switch req.Operation {
	case admissionv1.Create:
		ops, err = a.defaultingPatch(req.Object.Raw)
	case admissionv1.Update:
		if req.UserInfo.Username != ComponentUser {
			ops, err = statusRevertPatch(req.Object.Raw, req.OldObject.Raw)
		}
	}
	if err != nil {
		return errorResponse(req, http.StatusBadRequest, err)
	}
	resp := &admissionv1.AdmissionResponse{UID: req.UID, Allowed: true}
	if len(ops) > 0 {
		if resp.Patch, err = json.Marshal(ops); err != nil {
			return errorResponse(req, http.StatusInternalServerError, err)
		}
		pt := admissionv1.PatchTypeJSONPatch
		resp.PatchType = &pt
	}
	return resp
}

// defaultingPatch converts the custom resource to the internal VMI, applies the registry's
// create preparation and returns the changes to spec, status and finalizers as a JSON Patch.
func (a *Admitter) defaultingPatch(raw []byte) ([]Operation, error) {
	vmi, err := a.toInternal(raw)
	if err != nil {
		return nil, err
	}
	vmiregistry.PrepareForCreate(vmi)
	var out v1.VirtualMachineInstance
	if err := a.scheme.Convert(vmi, &out, nil); err != nil {
		return nil, err
	}
	orig, err := decodeJSON(raw)
	if err != nil {
		return nil, err
	}
	obj, ok := orig.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the object is not a JSON object")
	}
	mutated := make(map[string]any, len(obj)+1)
	for k, v := range obj {
		mutated[k] = v
	}
	// Only what defaulting owns changes; the rest of the object (metadata the API server fills
	// in, apiVersion) is left exactly as sent.
	if mutated["spec"], err = toJSONValue(out.Spec); err != nil {
		return nil, err
	}
	if mutated["status"], err = toJSONValue(out.Status); err != nil {
		return nil, err
	}
	meta, _ := obj["metadata"].(map[string]any)
	newMeta := make(map[string]any, len(meta)+1)
	for k, v := range meta {
		newMeta[k] = v
	}
	if newMeta["finalizers"], err = toJSONValue(out.Finalizers); err != nil {
		return nil, err
	}
	mutated["metadata"] = newMeta
	return Diff(orig, mutated), nil
}

// statusRevertPatch puts back the old status when an update changed it.
func statusRevertPatch(raw, oldRaw []byte) ([]Operation, error) {
	newDoc, err := decodeJSON(raw)
	if err != nil {
		return nil, err
	}
	oldDoc, err := decodeJSON(oldRaw)
	if err != nil {
		return nil, err
	}
	newObj, ok1 := newDoc.(map[string]any)
	oldObj, ok2 := oldDoc.(map[string]any)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("the object is not a JSON object")
	}
	if reflect.DeepEqual(newObj["status"], oldObj["status"]) {
		return nil, nil
	}
	reverted := make(map[string]any, len(newObj))
	for k, v := range newObj {
		reverted[k] = v
	}
	if oldStatus, had := oldObj["status"]; had {
		reverted["status"] = oldStatus
	} else {
		delete(reverted, "status")
	}
	return Diff(newObj, reverted), nil
}

// Validate runs Vireo's validation of a VMI on CREATE, and its update validation (the spec is
// immutable) on UPDATE, and denies the request with the field errors.
func (a *Admitter) Validate(req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	vmi, err := a.toInternal(req.Object.Raw)
	if err != nil {
		return errorResponse(req, http.StatusBadRequest, err)
	}
	labels := field.NewPath("metadata", "labels")
	var errs field.ErrorList
	switch req.Operation {
	case admissionv1.Create:
		errs = validation.ValidateVirtualMachineInstance(vmi)
		errs = append(errs, validation.ValidateReservedLabels(vmi.Labels, nil, labels)...)
	case admissionv1.Update:
		old, err := a.toInternal(req.OldObject.Raw)
		if err != nil {
			return errorResponse(req, http.StatusBadRequest, err)
		}
		errs = validation.ValidateVirtualMachineInstanceUpdate(vmi, old)
		if req.UserInfo.Username != ComponentUser {
			errs = append(errs, validation.ValidateReservedLabels(vmi.Labels, old.Labels, labels)...)
		}
	}
	if len(errs) > 0 {
		gk := schema.GroupKind{Group: req.Kind.Group, Kind: req.Kind.Kind}
		status := apierrors.NewInvalid(gk, req.Name, errs).ErrStatus
		return &admissionv1.AdmissionResponse{UID: req.UID, Allowed: false, Result: &status}
	}
	return &admissionv1.AdmissionResponse{UID: req.UID, Allowed: true}
}

// toInternal decodes a custom resource (any group, kubevirt.io/v1's schema) into the internal VMI.
func (a *Admitter) toInternal(raw []byte) (*v1.VirtualMachineInstance, error) {
	var in v1.VirtualMachineInstance
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, fmt.Errorf("decoding the VirtualMachineInstance: %w", err)
	}
	out := &v1.VirtualMachineInstance{}
	if err := a.scheme.Convert(&in, out, nil); err != nil {
		return nil, fmt.Errorf("converting the VirtualMachineInstance: %w", err)
	}
	return out, nil
}

func errorResponse(req *admissionv1.AdmissionRequest, code int32, err error) *admissionv1.AdmissionResponse {
	return &admissionv1.AdmissionResponse{UID: req.UID, Allowed: false, Result: &metav1.Status{
		Status: metav1.StatusFailure, Code: code, Message: err.Error(),
	}}
}
