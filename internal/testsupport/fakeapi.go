// Package testsupport is what Vireo's tests share (for tests only): StampObjects makes
// client-go's fake clientsets (Kubernetes' and Vireo's generated one) behave as an API server
// does where the controllers' unit tests depend on it (every create and update gets the next
// resourceVersion, a create a UID, a creation timestamp and, for a generateName, a name),
// FreePort finds a loopback port, InNetns runs code inside a named network namespace, and
// Deadline and QuietKlog serve fuzz targets (a hang crashes, logs are discarded). VMI builders
// in the style of KubeVirt's libvmi are in libvmi/.
package testsupport

import (
	"strconv"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clienttesting "k8s.io/client-go/testing"
)

// Reactor is a fake clientset: it takes reactors.
type Reactor interface {
	PrependReactor(verb, resource string, reaction clienttesting.ReactionFunc)
}

// StampObjects makes every fake stamp the objects created and updated through it, from one
// resourceVersion counter shared by all; now gives the creation timestamps.
func StampObjects(now func() time.Time, fakes ...Reactor) {
	var rv atomic.Int64
	stamp := func(action clienttesting.Action) (bool, runtime.Object, error) {
		a, ok := action.(interface{ GetObject() runtime.Object })
		if !ok {
			return false, nil, nil
		}
		o, err := meta.Accessor(a.GetObject())
		if err != nil {
			return false, nil, nil
		}
		n := strconv.FormatInt(rv.Add(1), 10)
		o.SetResourceVersion(n)
		if action.GetVerb() == "create" {
			if o.GetName() == "" && o.GetGenerateName() != "" {
				o.SetName(o.GetGenerateName() + n)
			}
			o.SetUID(types.UID("uid-" + n))
			o.SetCreationTimestamp(metav1.NewTime(now()))
		}
		return false, nil, nil // the fake's tracker stores the stamped object
	}
	for _, f := range fakes {
		f.PrependReactor("create", "*", stamp)
		f.PrependReactor("update", "*", stamp)
	}
}
