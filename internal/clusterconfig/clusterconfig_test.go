package clusterconfig

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/generated/clientset/versioned/fake"
	vireoinformers "github.com/vireo-dev/vireo/generated/informers/externalversions"
)

// started returns a Config on a fake API holding objs, with its informer started and synced.
func started(t *testing.T, objs ...*v1.KubeVirt) (*Config, *fake.Clientset) {
	t.Helper()
	client := fake.NewClientset()
	for _, o := range objs {
		if _, err := client.KubevirtV1().KubeVirts(o.Namespace).Create(context.Background(), o, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	f := vireoinformers.NewSharedInformerFactoryWithOptions(client, 0, vireoinformers.WithNamespace(v1.InstallNamespace))
	c, err := New(f.Kubevirt().V1().KubeVirts())
	if err != nil {
		t.Fatal(err)
	}
	f.Start(t.Context().Done())
	t.Cleanup(f.Shutdown)
	f.WaitForCacheSync(t.Context().Done())
	if !c.HasSynced() {
		t.Fatal("informer not synced")
	}
	return c, client
}

func kubeVirt(name string, created time.Time, useEmulation bool) *v1.KubeVirt {
	return &v1.KubeVirt{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: v1.InstallNamespace, Generation: 1, CreationTimestamp: metav1.NewTime(created)},
		Spec: v1.KubeVirtSpec{Configuration: v1.KubeVirtConfiguration{
			DeveloperConfiguration: &v1.DeveloperConfiguration{UseEmulation: useEmulation},
			MigrationConfiguration: &v1.MigrationConfiguration{ParallelMigrationsPerCluster: new(uint32(9))},
		}},
	}
}

// eventually polls until get satisfies ok.
func eventually(t *testing.T, what string, c *Config, ok func(Settings) bool) Settings {
	t.Helper()
	var s Settings
	err := wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		s = c.Get()
		return ok(s), nil
	})
	if err != nil {
		t.Fatalf("%s: settings stayed %+v", what, s)
	}
	return s
}

func TestNoObjectMeansKubeVirtsDefaults(t *testing.T) {
	c, _ := started(t)
	s := c.Get()
	if s.Object != nil || s.Source != NoObjectSource || s.UseEmulation {
		t.Errorf("settings %+v, want KubeVirt's defaults from %q", s, NoObjectSource)
	}
	if s.Migrations.ParallelMigrationsPerCluster != 5 || s.Migrations.ProgressTimeout != 150 {
		t.Errorf("migrations %+v, want KubeVirt's defaults", s.Migrations)
	}
	if e := c.Emulation(); e.Allowed || e.Source != NoObjectSource {
		t.Errorf("emulation %+v, want not allowed, from the defaults", e)
	}
}

// TestChangesTakeEffectWithoutRestart follows an object through creation, a patch and deletion.
func TestChangesTakeEffectWithoutRestart(t *testing.T) {
	c, client := started(t)
	ctx := t.Context()
	kvs := client.KubevirtV1().KubeVirts(v1.InstallNamespace)
	if _, err := kvs.Create(ctx, kubeVirt("kubevirt", time.Now(), true), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	s := eventually(t, "after create", c, func(s Settings) bool { return s.UseEmulation })
	if s.Source != "KubeVirt vireo-system/kubevirt" || s.Migrations.ParallelMigrationsPerCluster != 9 || s.Migrations.ParallelOutboundMigrationsPerNode != 2 {
		t.Errorf("settings %+v, want the object's with KubeVirt's defaults for the rest", s)
	}
	kv := s.Object.DeepCopy()
	kv.Spec.Configuration.DeveloperConfiguration.UseEmulation = false
	if _, err := kvs.Update(ctx, kv, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "after the update", c, func(s Settings) bool { return !s.UseEmulation && s.Object != nil })
	if err := kvs.Delete(ctx, "kubevirt", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "after delete", c, func(s Settings) bool { return s.Object == nil && s.Source == NoObjectSource })
}

func TestTheOldestObjectWins(t *testing.T) {
	now := time.Now()
	c, _ := started(t, kubeVirt("newer", now, false), kubeVirt("older", now.Add(-time.Hour), true),
		// Objects elsewhere are not the installation's (the API refuses them anyway).
		&v1.KubeVirt{ObjectMeta: metav1.ObjectMeta{Name: "stray", Namespace: "default", CreationTimestamp: metav1.NewTime(now.Add(-2 * time.Hour))}})
	s := c.Get()
	if s.Object == nil || s.Object.Name != "older" || !s.UseEmulation {
		t.Errorf("settings from %v, want the oldest object, older", s.Source)
	}
}

func TestAcknowledgeRecordsTheGeneration(t *testing.T) {
	kv := kubeVirt("kubevirt", time.Now(), true)
	kv.Generation = 3
	c, client := started(t, kv)
	go c.Acknowledge(t.Context(), client)
	err := wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		got, err := client.KubevirtV1().KubeVirts(v1.InstallNamespace).Get(ctx, "kubevirt", metav1.GetOptions{})
		return err == nil && got.Status.ObservedGeneration != nil && *got.Status.ObservedGeneration == 3, nil
	})
	if err != nil {
		got, _ := client.KubevirtV1().KubeVirts(v1.InstallNamespace).Get(t.Context(), "kubevirt", metav1.GetOptions{})
		t.Fatalf("status.observedGeneration never became 3: status %+v", got.Status)
	}
}
