package instancetype

import (
	"context"
	"errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/client-go/kubernetes"

	cdiv1beta1 "github.com/vireo-dev/vireo/apis/cdi/v1beta1"
	"github.com/vireo-dev/vireo/apis/instancetype/infer"
	"github.com/vireo-dev/vireo/registry/storeutil"
)

// Sources reads what VMs infer their instancetypes and preferences from: DataVolumes from
// vireo-apiserver's own storage, PersistentVolumeClaims from kube-apiserver.
type Sources struct {
	// DataVolumes is the DataVolume store (set once the cdi group is built).
	DataVolumes *storeutil.REST
	// Kube reads claims; nil without the core API.
	Kube kubernetes.Interface
}

var _ infer.Sources = &Sources{}

// errNoCoreAPI is the failure to read a claim on a server without the core API.
var errNoCoreAPI = errors.New("PersistentVolumeClaims cannot be read: vireo-apiserver runs without the core API")

// ClaimLabels returns the labels of a PersistentVolumeClaim.
func (s *Sources) ClaimLabels(ctx context.Context, namespace, name string) (map[string]string, error) {
	if s.Kube == nil {
		return nil, errNoCoreAPI
	}
	pvc, err := s.Kube.CoreV1().PersistentVolumeClaims(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return pvc.Labels, nil
}

// DataVolume returns a DataVolume.
func (s *Sources) DataVolume(ctx context.Context, namespace, name string) (*cdiv1beta1.DataVolume, error) {
	obj, err := s.DataVolumes.Get(genericapirequest.WithNamespace(ctx, namespace), name, &metav1.GetOptions{})
	if err != nil {
		return nil, named(err, cdiv1beta1.Resource("datavolumes"), name)
	}
	return obj.(*cdiv1beta1.DataVolume), nil
}
