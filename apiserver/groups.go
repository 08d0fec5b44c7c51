package apiserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/endpoints"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/kubernetes"

	cdiv1beta1 "github.com/vireo-dev/vireo/apis/cdi/v1beta1"
	coreinstall "github.com/vireo-dev/vireo/apis/core/install"
	corev1 "github.com/vireo-dev/vireo/apis/core/v1"
	instancetypev1beta1 "github.com/vireo-dev/vireo/apis/instancetype/v1beta1"
	migrationsv1alpha1 "github.com/vireo-dev/vireo/apis/migrations/v1alpha1"
	poolinstall "github.com/vireo-dev/vireo/apis/pool/install"
	poolv1beta1 "github.com/vireo-dev/vireo/apis/pool/v1beta1"
	"github.com/vireo-dev/vireo/registry/agentclient"
	"github.com/vireo-dev/vireo/registry/datavolume"
	"github.com/vireo-dev/vireo/registry/dvupload"
	"github.com/vireo-dev/vireo/registry/expandspec"
	"github.com/vireo-dev/vireo/registry/guestinfo"
	"github.com/vireo-dev/vireo/registry/instancetype"
	kvregistry "github.com/vireo-dev/vireo/registry/kubevirt"
	"github.com/vireo-dev/vireo/registry/migrateaction"
	"github.com/vireo-dev/vireo/registry/migration"
	"github.com/vireo-dev/vireo/registry/migrationpolicy"
	"github.com/vireo-dev/vireo/registry/pool"
	"github.com/vireo-dev/vireo/registry/portforward"
	"github.com/vireo-dev/vireo/registry/replicaset"
	"github.com/vireo-dev/vireo/registry/storeutil"
	"github.com/vireo-dev/vireo/registry/vm"
	"github.com/vireo-dev/vireo/registry/vmaction"
	"github.com/vireo-dev/vireo/registry/vmi"
	"github.com/vireo-dev/vireo/registry/vmiaction"
	"github.com/vireo-dev/vireo/registry/vmistream"
)

// SubresourcesGroupVersion is KubeVirt's aggregated group for console, VNC and actions.
// It serves the same console and VNC handlers as kubevirt.io/v1 at KubeVirt's paths.
var SubresourcesGroupVersion = metav1.GroupVersion{Group: "subresources.kubevirt.io", Version: "v1"}

// SubresourcesV1alpha3 is the group's deprecated version, which KubeVirt still serves: the same
// subresources.
var SubresourcesV1alpha3 = metav1.GroupVersion{Group: SubresourcesGroupVersion.Group, Version: "v1alpha3"}

// v1alpha3Storage is what kubevirt.io/v1alpha3 serves: the kinds and their status, as KubeVirt's
// CRDs serve them in both versions (the subresources are at subresources.kubevirt.io).
func v1alpha3Storage(v1Storage map[string]rest.Storage) map[string]rest.Storage {
	out := map[string]rest.Storage{}
	for _, resource := range []string{"virtualmachineinstances", "virtualmachines", "virtualmachineinstancemigrations", "kubevirts", "virtualmachineinstancereplicasets"} {
		out[resource] = v1Storage[resource]
		out[resource+"/status"] = v1Storage[resource+"/status"]
	}
	out["virtualmachineinstancereplicasets/scale"] = v1Storage["virtualmachineinstancereplicasets/scale"]
	return out
}

// groupDeps are what the API groups are built from.
type groupDeps struct {
	scheme *runtime.Scheme
	codecs serializer.CodecFactory
	getter generic.RESTOptionsGetter
	agents *agentclient.Client
	authz  authorizer.Authorizer
	// kube reads the core objects VMs refer to (claims, ControllerRevisions); nil standalone.
	kube kubernetes.Interface
	// streams are the console and VNC sessions relayed, told to end when the server stops.
	streams *vmistream.Sessions
}

func installAPIGroups(gs *genericapiserver.GenericAPIServer, d groupDeps) error {
	scheme, codecs, getter, agents, authz := d.scheme, d.codecs, d.getter, d.agents, d.authz
	kubevirt := genericapiserver.NewDefaultAPIGroupInfo(corev1.GroupName, scheme, runtime.NewParameterCodec(scheme), codecs)
	kubevirtStorage := map[string]rest.Storage{}
	vmis, err := addStores(kubevirtStorage, "virtualmachineinstances", scheme, getter, vmi.Resource())
	if err != nil {
		return err
	}
	// Connecters at kubevirt.io/v1 and, the same handlers, at subresources.kubevirt.io/v1.
	connecters := map[string]connecterStorage{}
	for _, kind := range streamSubresources {
		connecters["virtualmachineinstances/"+kind] = vmistream.New(kind, vmis, agents, d.streams)
	}
	for _, action := range vmiaction.Names {
		connecters["virtualmachineinstances/"+action] = vmiaction.New(action, vmis, agents)
	}
	for _, name := range guestinfo.Names {
		connecters["virtualmachineinstances/"+name] = guestinfo.New(name, vmis, agents)
	}
	clones := datavolume.CloneSources{Authorizer: authz}
	instancetypes, sizes, err := instancetypeGroup(scheme, codecs, getter)
	if err != nil {
		return err
	}
	sizes.Revision = revisionReader(d.kube)
	volumes := &instancetype.Sources{Kube: d.kube}
	if _, err := addStores(kubevirtStorage, "virtualmachines", scheme, getter, vm.Resource(clones, vm.Sizes{Finder: sizes, Volumes: volumes})); err != nil {
		return err
	}
	vms, vmsStatus := kubevirtStorage["virtualmachines"].(*storeutil.REST), kubevirtStorage["virtualmachines/status"].(*storeutil.StatusREST)
	for _, action := range vmaction.Names {
		connecters["virtualmachines/"+action] = vmaction.New(action, vms, vmsStatus, vmis)
	}
	connecters["virtualmachines/"+expandspec.Subresource] = expandspec.New(vms, sizes)
	migrationLookups := &migration.Lookups{VMIs: vmis}
	migrations, err := addStores(kubevirtStorage, "virtualmachineinstancemigrations", scheme, getter, migration.Resource(migrationLookups))
	if err != nil {
		return err
	}
	migrationLookups.Migrations = migrations
	connecters["virtualmachines/"+migrateaction.Name] = migrateaction.ForVMs(vms, vmis, migrations)
	connecters["virtualmachineinstances/"+migrateaction.Name] = migrateaction.ForVMIs(vmis, migrations)
	for path, c := range connecters {
		kubevirtStorage[path] = c
	}
	replicaSets, err := addStores(kubevirtStorage, "virtualmachineinstancereplicasets", scheme, getter, replicaset.Resource())
	if err != nil {
		return err
	}
	kubevirtStorage["virtualmachineinstancereplicasets/scale"] = storeutil.NewScaleREST(replicaSets, replicaset.Replicas)
	// The installation's one KubeVirt settings object (creation checks there is no other).
	settings := &kvregistry.Singleton{}
	if settings.Store, err = addStores(kubevirtStorage, "kubevirts", scheme, getter, kvregistry.Resource(settings)); err != nil {
		return err
	}
	kubevirt.VersionedResourcesStorageMap[corev1.SchemeGroupVersion.Version] = kubevirtStorage
	kubevirt.VersionedResourcesStorageMap[coreinstall.V1alpha3.Version] = v1alpha3Storage(kubevirtStorage)

	cdi := genericapiserver.NewDefaultAPIGroupInfo(cdiv1beta1.GroupName, scheme, runtime.NewParameterCodec(scheme), codecs)
	cdiStorage := map[string]rest.Storage{}
	dvs, err := addStores(cdiStorage, "datavolumes", scheme, getter, datavolume.Resource(clones))
	if err != nil {
		return err
	}
	volumes.DataVolumes = dvs
	cdiStorage["datavolumes/upload"] = dvupload.New(dvs, agents)
	cdi.VersionedResourcesStorageMap[cdiv1beta1.SchemeGroupVersion.Version] = cdiStorage

	policies, err := migrationsGroup(scheme, codecs, getter)
	if err != nil {
		return err
	}
	pools, err := poolGroup(scheme, codecs, getter, clones)
	if err != nil {
		return err
	}
	if err := gs.InstallAPIGroups(&kubevirt, &cdi, &policies, &pools, &instancetypes); err != nil {
		return err
	}
	if err := installSubresourcesDiscovery(gs, subresourceNames(connecters)); err != nil {
		return err
	}
	shot := vmistream.NewScreenshot(vmis, agents, authz)
	if err := installScreenshotRoute(gs, shot, codecs); err != nil {
		return err
	}
	forwarder := portforward.New(vmis, vms)
	for _, gv := range []metav1.GroupVersion{SubresourcesGroupVersion, SubresourcesV1alpha3} {
		gs.Handler.NonGoRestfulMux.HandlePrefix("/apis/"+gv.String()+"/namespaces/", subresourcesHandler(connecters, shot, forwarder, sizes, codecs))
	}
	return nil
}

// revisionReader reads the data of ControllerRevisions (the versions of instancetypes and
// preferences VMs pin); nil without the core API.
func revisionReader(kube kubernetes.Interface) func(ctx context.Context, namespace, name string) ([]byte, error) {
	if kube == nil {
		return nil
	}
	return func(ctx context.Context, namespace, name string) ([]byte, error) {
		rev, err := kube.AppsV1().ControllerRevisions(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		return rev.Data.Raw, nil
	}
}

// migrationsGroup is migrations.kubevirt.io: the cluster's MigrationPolicies.
func migrationsGroup(scheme *runtime.Scheme, codecs serializer.CodecFactory, getter generic.RESTOptionsGetter) (genericapiserver.APIGroupInfo, error) {
	group := genericapiserver.NewDefaultAPIGroupInfo(migrationsv1alpha1.GroupName, scheme, runtime.NewParameterCodec(scheme), codecs)
	storage := map[string]rest.Storage{}
	if _, err := addStores(storage, "migrationpolicies", scheme, getter, migrationpolicy.Resource()); err != nil {
		return group, err
	}
	group.VersionedResourcesStorageMap[migrationsv1alpha1.SchemeGroupVersion.Version] = storage
	return group, nil
}

// poolGroup is pool.kubevirt.io: VirtualMachinePools and their /scale, in v1beta1 and (the same
// objects) v1alpha1.
func poolGroup(scheme *runtime.Scheme, codecs serializer.CodecFactory, getter generic.RESTOptionsGetter, clones datavolume.CloneSources) (genericapiserver.APIGroupInfo, error) {
	group := genericapiserver.NewDefaultAPIGroupInfo(poolv1beta1.GroupName, scheme, runtime.NewParameterCodec(scheme), codecs)
	storage := map[string]rest.Storage{}
	pools, err := addStores(storage, "virtualmachinepools", scheme, getter, pool.Resource(clones))
	if err != nil {
		return group, err
	}
	storage["virtualmachinepools/scale"] = storeutil.NewScaleREST(pools, pool.Replicas)
	group.VersionedResourcesStorageMap[poolv1beta1.SchemeGroupVersion.Version] = storage
	group.VersionedResourcesStorageMap[poolinstall.V1alpha1.Version] = storage
	return group, nil
}

// instancetypeGroup is instancetype.kubevirt.io: instancetypes and preferences, namespaced and
// cluster-wide. They have no status, as KubeVirt's. The finder reads them for the VMs' admission.
func instancetypeGroup(scheme *runtime.Scheme, codecs serializer.CodecFactory, getter generic.RESTOptionsGetter) (genericapiserver.APIGroupInfo, *instancetype.Finder, error) {
	group := genericapiserver.NewDefaultAPIGroupInfo(instancetypev1beta1.GroupName, scheme, runtime.NewParameterCodec(scheme), codecs)
	storage := map[string]rest.Storage{}
	f := &instancetype.Finder{}
	err := errors.Join(
		addMainStore(storage, "virtualmachineinstancetypes", scheme, getter, instancetype.Instancetypes(), &f.Instancetypes),
		addMainStore(storage, "virtualmachineclusterinstancetypes", scheme, getter, instancetype.ClusterInstancetypes(), &f.ClusterInstancetypes),
		addMainStore(storage, "virtualmachinepreferences", scheme, getter, instancetype.Preferences(), &f.Preferences),
		addMainStore(storage, "virtualmachineclusterpreferences", scheme, getter, instancetype.ClusterPreferences(), &f.ClusterPreferences),
	)
	group.VersionedResourcesStorageMap[instancetypev1beta1.SchemeGroupVersion.Version] = storage
	return group, f, err
}

// addMainStore puts a resource without a status subresource into a version's storage map, and
// the store into *out.
func addMainStore[T storeutil.Object](m map[string]rest.Storage, name string, scheme *runtime.Scheme, getter generic.RESTOptionsGetter, res storeutil.Resource[T], out **storeutil.REST) error {
	main, _, err := storeutil.NewStores(scheme, getter, res)
	if err != nil {
		return fmt.Errorf("%s storage: %w", name, err)
	}
	m[name] = main
	*out = main
	return nil
}

// addStores puts a resource and its /status into a version's storage map and returns the main store.
func addStores[T storeutil.Object](m map[string]rest.Storage, name string, scheme *runtime.Scheme, getter generic.RESTOptionsGetter, res storeutil.Resource[T]) (*storeutil.REST, error) {
	main, status, err := storeutil.NewStores(scheme, getter, res)
	if err != nil {
		return nil, fmt.Errorf("%s storage: %w", name, err)
	}
	m[name] = main
	m[name+"/status"] = status
	return main, nil
}

// subresourceNames are the subresources subresources.kubevirt.io serves (in both versions), as
// its discovery lists them ("virtualmachineinstances/console", ...), sorted.
func subresourceNames(connecters map[string]connecterStorage) []string {
	names := slices.Collect(maps.Keys(connecters))
	names = append(names, expandspec.NamespacedPath, "virtualmachineinstances/"+vmistream.VNC+"/screenshot",
		"virtualmachineinstances/"+portforward.Subresource, "virtualmachines/"+portforward.Subresource)
	slices.Sort(names)
	return names
}

// installSubresourcesDiscovery publishes subresources.kubevirt.io (v1, preferred, and v1alpha3)
// in discovery. Each version's legacy resource list names the subresources, namespaced and
// without verbs, as KubeVirt's virt-api lists them; the aggregated document is what
// kube-aggregator makes of that list for KubeVirt (which serves no aggregated discovery): each
// parent resource, without a kind, with its subresources.
func installSubresourcesDiscovery(gs *genericapiserver.GenericAPIServer, names []string) error {
	preferred := metav1.GroupVersionForDiscovery{GroupVersion: SubresourcesGroupVersion.String(), Version: SubresourcesGroupVersion.Version}
	group := metav1.APIGroup{
		TypeMeta: metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"},
		Name:     SubresourcesGroupVersion.Group,
		Versions: []metav1.GroupVersionForDiscovery{preferred,
			{GroupVersion: SubresourcesV1alpha3.String(), Version: SubresourcesV1alpha3.Version}},
		PreferredVersion: preferred,
	}
	gs.DiscoveryGroupManager.AddGroup(group)
	gs.Handler.NonGoRestfulMux.Handle("/apis/"+group.Name, jsonHandler(group))
	for _, gv := range []metav1.GroupVersion{SubresourcesGroupVersion, SubresourcesV1alpha3} {
		if err := installSubresourcesVersion(gs, gv, names); err != nil {
			return err
		}
	}
	return nil
}

// installSubresourcesVersion publishes one version of subresources.kubevirt.io.
func installSubresourcesVersion(gs *genericapiserver.GenericAPIServer, gv metav1.GroupVersion, names []string) error {
	resources := metav1.APIResourceList{
		TypeMeta:     metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
		GroupVersion: gv.String(),
		APIResources: []metav1.APIResource{},
	}
	for _, name := range names {
		resources.APIResources = append(resources.APIResources, metav1.APIResource{Name: name, Namespaced: true})
	}
	aggregated, err := endpoints.ConvertGroupVersionIntoToDiscovery(resources.APIResources)
	if err != nil {
		return fmt.Errorf("discovery of %s: %w", gv, err)
	}
	gs.AggregatedDiscoveryGroupManager.AddGroupVersion(gv.Group, apidiscoveryv2.APIVersionDiscovery{
		Version:   gv.Version,
		Freshness: apidiscoveryv2.DiscoveryFreshnessCurrent,
		Resources: aggregated,
	})
	gs.Handler.NonGoRestfulMux.Handle("/apis/"+gv.String(), jsonHandler(resources))
	return nil
}

func jsonHandler(obj any) http.Handler {
	body, err := json.Marshal(obj)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	})
}
