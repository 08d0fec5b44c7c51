package dvupload

import (
	"errors"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cdiv1beta1 "github.com/vireo-dev/vireo/apis/cdi/v1beta1"
	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

func TestUploadable(t *testing.T) {
	upload := &cdiv1beta1.DataVolumeSource{Upload: &cdiv1beta1.DataVolumeSourceUpload{}}
	dv := func(src *cdiv1beta1.DataVolumeSource, phase cdiv1beta1.DataVolumePhase, node string) *cdiv1beta1.DataVolume {
		d := &cdiv1beta1.DataVolume{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "d"},
			Spec: cdiv1beta1.DataVolumeSpec{Source: src}, Status: cdiv1beta1.DataVolumeStatus{Phase: phase}}
		if node != "" {
			d.Annotations = map[string]string{v1.UploadNodeAnnotation: node}
		}
		return d
	}
	failed := dv(upload, cdiv1beta1.Failed, "")
	failed.Status.Conditions = []cdiv1beta1.DataVolumeCondition{{Type: cdiv1beta1.DataVolumeRunning, Message: "not a disk image"}}
	for _, tc := range []struct {
		name  string
		dv    *cdiv1beta1.DataVolume
		code  int32
		want  string
		retry bool
	}{
		{"http source", dv(&cdiv1beta1.DataVolumeSource{HTTP: &cdiv1beta1.DataVolumeSourceHTTP{URL: "http://x"}}, cdiv1beta1.ImportInProgress, "n1"), 400, "has no upload source", false},
		{"no source", dv(nil, "", ""), 400, "has no upload source", false},
		{"done", dv(upload, cdiv1beta1.Succeeded, ""), 409, "has completed", false},
		{"failed", failed, 409, "has failed (phase Failed): not a disk image", false},
		{"scheduled", dv(upload, cdiv1beta1.UploadScheduled, ""), 503, "not ready yet (phase UploadScheduled)", true},
		{"new", dv(upload, "", ""), 503, "(phase Pending)", true},
		{"stale node", dv(upload, cdiv1beta1.UploadScheduled, "n1"), 503, "not ready yet", true},
	} {
		_, err := Uploadable(tc.dv)
		var status apierrors.APIStatus
		if !errors.As(err, &status) || status.Status().Code != tc.code || !strings.Contains(status.Status().Message, tc.want) {
			t.Errorf("%s: %v, want %d with %q", tc.name, err, tc.code, tc.want)
			continue
		}
		if d := status.Status().Details; tc.retry != (d != nil && d.RetryAfterSeconds > 0) {
			t.Errorf("%s: retry-after %v, want %v", tc.name, d, tc.retry)
		}
	}
	if node, err := Uploadable(dv(upload, cdiv1beta1.UploadReady, "n1")); err != nil || node != "n1" {
		t.Errorf("a ready upload: %q %v, want node n1", node, err)
	}
}
