package kubevirt

import (
	"context"
	"errors"
	"strings"
	"testing"

	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/registry/storeutil"
)

// fakeStore lists the given KubeVirt objects, or fails with err.
type fakeStore struct {
	items []v1.KubeVirt
	err   error
	// namespace is the namespace the last List asked for.
	namespace string
}

func (f *fakeStore) NewList() runtime.Object { return &v1.KubeVirtList{} }

func (f *fakeStore) List(ctx context.Context, _ *metainternalversion.ListOptions) (runtime.Object, error) {
	f.namespace, _ = genericapirequest.NamespaceFrom(ctx)
	if f.err != nil {
		return nil, f.err
	}
	return &v1.KubeVirtList{Items: f.items}, nil
}

func (f *fakeStore) ConvertToTable(context.Context, runtime.Object, runtime.Object) (*metav1.Table, error) {
	return nil, errors.New("not implemented")
}

func kubeVirt(ns, name string) *v1.KubeVirt {
	return &v1.KubeVirt{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
}

func TestOnlyOneKubeVirt(t *testing.T) {
	existing := *kubeVirt(v1.InstallNamespace, "kubevirt")
	cases := []struct {
		name    string
		store   *fakeStore
		kv      *v1.KubeVirt
		wantErr string // a substring of the one error; "" for none
	}{
		{"first", &fakeStore{}, kubeVirt(v1.InstallNamespace, "kubevirt"), ""},
		{"same name (the store says AlreadyExists)", &fakeStore{items: []v1.KubeVirt{existing}}, kubeVirt(v1.InstallNamespace, "kubevirt"), ""},
		{"second", &fakeStore{items: []v1.KubeVirt{existing}}, kubeVirt(v1.InstallNamespace, "other"),
			"KubeVirt vireo-system/kubevirt already holds this installation's settings, and Vireo honours only one KubeVirt object"},
		{"store fails", &fakeStore{err: errors.New("etcd is down")}, kubeVirt(v1.InstallNamespace, "kubevirt"), "etcd is down"},
		{"another namespace", &fakeStore{}, kubeVirt("default", "kubevirt"), "namespace vireo-system"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			strategy := storeutil.NewStrategy(runtime.NewScheme(), Resource(&Singleton{Store: c.store}).Hooks)
			errs := strategy.Validate(context.Background(), c.kv)
			switch {
			case c.wantErr == "" && len(errs) > 0:
				t.Fatalf("refused: %v", errs)
			case c.wantErr != "" && (len(errs) != 1 || !strings.Contains(errs[0].Error(), c.wantErr)):
				t.Fatalf("errors %v, want one containing %q", errs, c.wantErr)
			}
			if c.kv.Namespace == v1.InstallNamespace && c.store.namespace != v1.InstallNamespace {
				t.Errorf("listed namespace %q, want %s", c.store.namespace, v1.InstallNamespace)
			}
		})
	}
}

func TestSingletonNotWired(t *testing.T) {
	errs := Resource(&Singleton{}).Hooks.Validate(context.Background(), kubeVirt(v1.InstallNamespace, "kubevirt"))
	if len(errs) != 1 || errs[0].Type != field.ErrorTypeInternal {
		t.Fatalf("errors %v, want an internal error", errs)
	}
}

func TestCreateStoresSpecAsWrittenAndDeploys(t *testing.T) {
	strategy := storeutil.NewStrategy(runtime.NewScheme(), Resource(&Singleton{Store: &fakeStore{}}).Hooks)
	kv := kubeVirt(v1.InstallNamespace, "kubevirt")
	kv.Spec.Configuration.DeveloperConfiguration = &v1.DeveloperConfiguration{}
	kv.Status.Phase = v1.KubeVirtPhaseDeleting
	kv.Status.ObservedGeneration = new(int64(7))
	want := kv.Spec.DeepCopy()
	strategy.PrepareForCreate(context.Background(), kv)
	if kv.Spec.Configuration.MigrationConfiguration != nil || kv.Spec.Configuration.DeveloperConfiguration == nil ||
		kv.Spec.Configuration.DeveloperConfiguration.UseEmulation != want.Configuration.DeveloperConfiguration.UseEmulation {
		t.Errorf("spec changed on create: %+v, want %+v", kv.Spec, *want)
	}
	if kv.Status.Phase != v1.KubeVirtPhaseDeployed || kv.Status.ObservedGeneration != nil {
		t.Errorf("status %+v, want phase Deployed and nothing the client wrote", kv.Status)
	}
	if c := kv.Status.Conditions; len(c) != 1 || c[0].Type != v1.KubeVirtConditionAvailable || c[0].Status != v1.ConditionTrue {
		t.Errorf("conditions %+v, want Available True", c)
	}
}

func TestUpdateKeepsStatusAndBumpsGeneration(t *testing.T) {
	strategy := storeutil.NewStrategy(runtime.NewScheme(), Resource(&Singleton{}).Hooks)
	old := kubeVirt(v1.InstallNamespace, "kubevirt")
	old.Generation, old.ResourceVersion = 1, "5"
	old.Status = DeployedStatus(metav1.Now())
	upd := old.DeepCopy()
	upd.Status = v1.KubeVirtStatus{}
	upd.Spec.Configuration.DeveloperConfiguration = &v1.DeveloperConfiguration{UseEmulation: true}
	strategy.PrepareForUpdate(context.Background(), upd, old)
	if upd.Status.Phase != v1.KubeVirtPhaseDeployed {
		t.Errorf("an update of the main resource changed the status to %+v", upd.Status)
	}
	if upd.Generation != 2 {
		t.Errorf("generation %d after a spec change, want 2", upd.Generation)
	}
	if errs := strategy.ValidateUpdate(context.Background(), upd, old); len(errs) > 0 {
		t.Errorf("update refused: %v", errs)
	}
}

func TestTable(t *testing.T) {
	table := Resource(&Singleton{}).Table
	kv := kubeVirt(v1.InstallNamespace, "kubevirt")
	kv.CreationTimestamp = metav1.Now()
	kv.Status.Phase = v1.KubeVirtPhaseDeployed
	out, err := table.ConvertToTable(context.Background(), &v1.KubeVirtList{Items: []v1.KubeVirt{*kv}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var cols []string
	for _, c := range out.ColumnDefinitions {
		cols = append(cols, c.Name)
	}
	if strings.Join(cols, " ") != "Name Age Phase" {
		t.Errorf("columns %v, want KubeVirt's Name Age Phase", cols)
	}
	if len(out.Rows) != 1 || out.Rows[0].Cells[0] != "kubevirt" || out.Rows[0].Cells[2] != "Deployed" {
		t.Errorf("rows %+v", out.Rows)
	}
}
