package rbactest

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const (
	// all is the scope of a ClusterRoleBinding: every namespace and the cluster-scoped resources.
	all        = "*"
	installNS  = "vireo-system"
	kubeSystem = "kube-system"

	core     = ""
	kubevirt = "kubevirt.io"
	cdi      = "cdi.kubevirt.io"
)

// rbacDir holds the component files; files are the ones this test audits (roles.yaml, the
// user-facing roles, is not).
var (
	rbacDir = filepath.Join("..", "base", "rbac")
	files   = []string{"controller.yaml", "apiserver.yaml", "nodeagent.yaml"}
)

// grant is a line of the table: verbs on resources in a scope (a namespace, or all), limited to
// names when names is not empty, and the code that needs them.
type grant struct {
	ns        string
	group     string
	resources []string // resource or resource/subresource
	verbs     []string
	names     []string
	why       string
}

func s(v ...string) []string { return v }

// expected is, per ServiceAccount (namespace/name), what its component's code calls with it.
// Every tuple the RBAC grants must be here, and every tuple here must be granted.
var expected = map[string][]grant{
	// vireo-controller: cmd/vireo-controller, controllers/... (wired by controllers/manager).
	installNS + "/vireo-controller": {
		{all, kubevirt, s("virtualmachineinstances"), s("list", "watch"), nil, "informers: manager.runControllers (vmi, migration, vm, evacuation controllers; metrics.Register)"},
		{all, kubevirt, s("virtualmachineinstances"), s("create"), nil, "vm.Controller.apply: creates the VM's VMI; replicaset.Controller.scale"},
		{all, kubevirt, s("virtualmachineinstances"), s("delete"), nil, "vm.Controller.apply: deletes the VM's VMI (run strategy); replicaset.Controller.delete"},
		{all, kubevirt, s("virtualmachineinstances"), s("update"), nil, "vmi.Controller.releaseFinalizer"},
		{all, kubevirt, s("virtualmachineinstances"), s("patch"), nil, "replicaset.Controller.patchOwners (adoption and release), workloadupdate.Controller.syncLabel"},
		{all, kubevirt, s("virtualmachineinstancereplicasets"), s("list", "watch"), nil, "informer: replicaset.New"},
		{all, kubevirt, s("virtualmachineinstancereplicasets"), s("get"), nil, "replicaset.Controller.sync (ownership.MayAdopt)"},
		{all, "migrations.kubevirt.io", s("migrationpolicies"), s("list", "watch"), nil, "informer: migration.NewPolicies"},
		{all, core, s("namespaces"), s("list", "watch"), nil, "informer: migration.NewPolicies (namespace labels)"},
		{all, kubevirt, s("virtualmachineinstancereplicasets/status"), s("update"), nil, "replicaset.Controller.writeStatus"},
		{all, kubevirt, s("virtualmachineinstances/status"), s("update"), nil, "reconcile.WriteVMIStatus (vmi and migration controllers), vmi.Controller.refuseUnsupported"},
		{all, kubevirt, s("virtualmachineinstances/finalizers"), s("update"), nil, "blockOwnerDeletion on the VMI: launcherpod.Render (launcher Pods), evacuation.Budget (PodDisruptionBudgets)"},
		{all, kubevirt, s("virtualmachines"), s("list", "watch"), nil, "informer: vm.New, pool.New, metrics.Register"},
		{all, kubevirt, s("virtualmachines"), s("create", "delete"), nil, "pool.Controller.scale, pool.Controller.autoheal"},
		{all, kubevirt, s("virtualmachines"), s("update"), nil, "pool.Controller.update (a new template)"},
		{all, "pool.kubevirt.io", s("virtualmachinepools"), s("list", "watch"), nil, "informer: pool.New"},
		{all, "pool.kubevirt.io", s("virtualmachinepools"), s("get"), nil, "pool.Controller.sync (ownership.MayAdopt)"},
		{all, "instancetype.kubevirt.io", s("virtualmachineinstancetypes", "virtualmachineclusterinstancetypes", "virtualmachinepreferences",
			"virtualmachineclusterpreferences"), s("get"), nil, "vm.Controller.current (the version a starting VM captures)"},
		{all, "apps", s("controllerrevisions"), s("get", "create"), nil, "vm.Controller.revision"},
		{all, "pool.kubevirt.io", s("virtualmachinepools/status"), s("update"), nil, "pool.Controller.writeStatus"},
		{all, kubevirt, s("virtualmachines/status"), s("update"), nil, "vm.Controller.updateStatus"},
		{all, kubevirt, s("virtualmachineinstancemigrations"), s("list", "watch"), nil, "informer: migration.New, evacuation.New, metrics.RegisterMigrations"},
		{all, kubevirt, s("virtualmachineinstancemigrations"), s("create"), nil, "evacuation.Controller.syncEvacuation, workloadupdate.Controller.migrate"},
		{all, kubevirt, s("virtualmachineinstancemigrations"), s("update"), nil, "migration.Controller.releaseFinalizer"},
		{all, kubevirt, s("virtualmachineinstancemigrations/status"), s("update"), nil, "migration.Controller.writeStatus"},
		{installNS, kubevirt, s("kubevirts"), s("list", "watch"), nil, "informer: manager.startSettings (clusterconfig.New)"},
		{installNS, kubevirt, s("kubevirts/status"), s("patch"), nil, "clusterconfig.Config.acknowledge, workloadupdate.Controller.syncCount (merge patches of status)"},
		{installNS, "apps", s("daemonsets"), s("get"), s("vireo-nodeagent"), "workloadupdate.Controller.nodeAgentsRolledOut"},

		{all, cdi, s("datavolumes"), s("list", "watch"), nil, "informer: datavolume.New, vmi.New, vm.New"},
		{all, cdi, s("datavolumes"), s("create"), nil, "vm.Controller.ensureDataVolumes (spec.dataVolumeTemplates)"},
		{all, cdi, s("datavolumes"), s("update"), nil, "datavolume.Controller.recordUploadNode"},
		{all, cdi, s("datavolumes/status"), s("update"), nil, "datavolume.Controller.writeStatus"},
		{all, cdi, s("datavolumes/finalizers"), s("update"), nil, "blockOwnerDeletion on the DataVolume: datavolume.Claim, datavolume.ImporterPod (ownerReference)"},

		{all, core, s("pods"), s("list", "watch"), nil, "informers: manager.runControllers (launcher Pods), manager.newDataVolumeController (importer Pods)"},
		{all, core, s("pods"), s("get"), nil, "vmi.Controller.createPod/livePod, migration.Controller.pod, datavolume.Controller.createImporter"},
		{all, core, s("pods"), s("create"), nil, "vmi.Controller.createPod, migration.Controller.createTarget, datavolume.Controller.createImporter/observeSource"},
		{all, core, s("pods"), s("delete"), nil, "vmi.Controller.cleanUp, migration.Controller.deletePod, datavolume.Controller.sync/deleteSourcePods"},
		{all, core, s("pods/eviction"), s("create"), nil, "workloadupdate.Controller.evict"},
		{all, core, s("persistentvolumeclaims"), s("list", "watch"), nil, "informer: manager.newDataVolumeController"},
		{all, core, s("persistentvolumeclaims"), s("get"), nil, "datavolume.Controller.ensureClaim/sourceSize, vmi.Controller.withLiveMigratable"},
		{all, core, s("persistentvolumeclaims"), s("create"), nil, "datavolume.Controller.ensureClaim"},
		{all, core, s("events"), s("list", "watch"), nil, "vmi.Controller's informer of the kubelet's FailedMount events (mountProblem)"},
		{all, core, s("nodes"), s("list", "watch"), nil, "informer: manager.newEvacuationController"},
		{all, "storage.k8s.io", s("storageclasses"), s("list", "watch"), nil, "informer: manager.newDataVolumeController"},
		{all, "policy", s("poddisruptionbudgets"), s("list", "watch"), nil, "informer: manager.newEvacuationController"},
		{all, "policy", s("poddisruptionbudgets"), s("create", "update", "delete"), nil, "evacuation.Controller.syncBudget"},

		{installNS, "coordination.k8s.io", s("leases"), s("create"), nil, "manager.runElected: resourcelock.LeaseLock.Create"},
		{installNS, "coordination.k8s.io", s("leases"), s("get", "update"), s("vireo-controller"), "manager.runElected: resourcelock.LeaseLock.Get/Update"},

		{all, "authentication.k8s.io", s("tokenreviews"), s("create"), nil, "metrics.Options.Serve: delegated authentication of /metrics"},
		{all, "authorization.k8s.io", s("subjectaccessreviews"), s("create"), nil, "metrics.Options.Serve: delegated authorization of /metrics"},
	},

	// vireo-apiserver: cmd/vireo-apiserver, apiserver/..., registry/... and the generic server
	// of k8s.io/apiserver it builds (apiserver.Options.Config: RecommendedOptions).
	installNS + "/vireo-apiserver": {
		{all, "authentication.k8s.io", s("tokenreviews"), s("create"), nil, "RecommendedOptions.Authentication: delegated authentication (bearer tokens)"},
		{all, "authorization.k8s.io", s("subjectaccessreviews"), s("create"), nil, "RecommendedOptions.Authorization: delegated authorization"},
		{kubeSystem, core, s("configmaps"), s("get", "list", "watch"), s("extension-apiserver-authentication"),
			"RecommendedOptions.Authentication: client CA and front-proxy (requestheader) settings, read in-cluster and watched"},
		{all, core, s("namespaces"), s("list", "watch"), nil, "admission: NamespaceLifecycle, webhook and policy plugins' namespace informer"},
		{all, core, s("namespaces"), s("get"), nil, "admission: NamespaceLifecycle live lookup, webhook namespace matcher"},
		{all, "admissionregistration.k8s.io", s("mutatingwebhookconfigurations", "validatingwebhookconfigurations"), s("list", "watch"), nil,
			"admission: MutatingAdmissionWebhook, ValidatingAdmissionWebhook (informers)"},
		{all, "admissionregistration.k8s.io", s("validatingadmissionpolicies", "validatingadmissionpolicybindings"), s("list", "watch"), nil,
			"admission: ValidatingAdmissionPolicy (informers)"},
		{all, "admissionregistration.k8s.io", s("mutatingadmissionpolicies", "mutatingadmissionpolicybindings"), s("list", "watch"), nil,
			"admission: MutatingAdmissionPolicy (informers)"},
		{all, "flowcontrol.apiserver.k8s.io", s("flowschemas", "prioritylevelconfigurations"), s("list", "watch"), nil,
			"priority and fairness: FeatureOptions.ApplyTo -> flowcontrol.New (informers)"},
		{installNS, core, s("pods"), s("list", "watch"), nil, "registry/agentclient.New: informer of the node agents' Pods (console, VNC)"},
		{all, core, s("persistentvolumeclaims"), s("get"), nil, "instancetype.Sources.ClaimLabels: VM admission infers instancetypes from claims' labels"},
		{all, "apps", s("controllerrevisions"), s("get"), nil, "apiserver.revisionReader: VM admission reads the revisions VMs pin"},
	},

	// vireo-nodeagent: cmd/vireo-nodeagent, nodeagent/... .
	installNS + "/vireo-nodeagent": {
		{all, kubevirt, s("virtualmachineinstances"), s("list", "watch"), nil, "nodeagent.New: informers of the node's VMIs and of those migrating to it"},
		{all, kubevirt, s("virtualmachineinstances"), s("get"), nil, "Agent.currentVMI: a VMI the informer does not show Running yet, read live before a console or action is refused"},
		{all, kubevirt, s("virtualmachineinstances/status"), s("update"), nil, "Agent.writeStatus (reconcile.WriteVMIStatus)"},
		{all, core, s("pods"), s("list", "watch"), nil, "nodeagent.New: informer of the node's launcher, upload and clone source Pods"},
		{all, core, s("pods"), s("get"), nil, "Agent.podDeletedUnderVMI"},
		{installNS, kubevirt, s("kubevirts"), s("list", "watch"), nil, "nodeagent.New: informer of the settings (clusterconfig.New)"},
		{all, "authentication.k8s.io", s("tokenreviews"), s("create"), nil, "Agent.serveMetrics (metrics.Options.Serve): delegated authentication"},
		{all, "authorization.k8s.io", s("subjectaccessreviews"), s("create"), nil, "Agent.serveMetrics (metrics.Options.Serve): delegated authorization"},
	},
}

func TestLeastPrivilege(t *testing.T) {
	p, problems := load(files)
	if len(problems) > 0 {
		t.Fatalf("reading %v:\n  %s", files, strings.Join(problems, "\n  "))
	}
	granted, problems := p.grants()
	for _, sa := range sortedKeys(p.serviceAccounts) {
		if _, ok := expected[sa]; !ok {
			problems = append(problems, fmt.Sprintf("ServiceAccount %s (%s) has no table in this test: say what its code calls", sa, p.serviceAccounts[sa]))
		}
	}
	for _, sa := range sortedKeys(expected) {
		if _, ok := p.serviceAccounts[sa]; !ok {
			problems = append(problems, fmt.Sprintf("ServiceAccount %s of the table is not defined in %v", sa, files))
		}
	}
	for _, sa := range sortedKeys(granted) {
		if _, ok := p.serviceAccounts[sa]; !ok {
			problems = append(problems, fmt.Sprintf("bindings name ServiceAccount %s, which %v do not define", sa, files))
		}
	}
	want, tableProblems := expandTable(expected)
	problems = append(problems, tableProblems...)
	for _, pr := range problems {
		t.Error(pr)
	}
	if d := diff(want, granted); d != "" {
		t.Errorf("the RBAC of %v differs from what the components call:%s", files, d)
	}
}

// TestCheckerCatches proves the checks above fail where they should: on a wildcard, on a grant
// the table lacks, on an entry the RBAC lacks, and on a role the bindings cannot resolve.
func TestCheckerCatches(t *testing.T) {
	dir := t.TempDir()
	manifest := `apiVersion: v1
kind: ServiceAccount
metadata: {name: sa, namespace: ns}
---
# comments only
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: r}
rules:
  - apiGroups: [""]
    resources: ["pods"]
    verbs: ["get", "list"]
  - apiGroups: ["kubevirt.io"]
    resources: ["*"]
    verbs: ["get"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: r}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: r}
subjects: [{kind: ServiceAccount, name: sa, namespace: ns}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: missing, namespace: ns}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: missing}
subjects: [{kind: ServiceAccount, name: sa, namespace: ns}]
`
	file := filepath.Join(dir, "test.yaml")
	if err := os.WriteFile(file, []byte(manifest), 0o600); err != nil {
		t.Fatal(err)
	}
	p, problems := load([]string{file})
	if len(problems) > 0 {
		t.Fatalf("load: %v", problems)
	}
	granted, problems := p.grants()
	for _, want := range []string{`wildcard "*" in resources`, "Role missing is defined neither"} {
		if !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, want) }) {
			t.Errorf("no problem says %q; got %q", want, problems)
		}
	}
	table, problems := expandTable(map[string][]grant{"ns/sa": {
		{all, core, s("pods"), s("get"), nil, "a"},
		{all, core, s("pods"), s("watch"), nil, "b"},
		{all, core, s("pods"), s("get"), nil, "c"},
	}})
	if len(problems) != 1 || !strings.Contains(problems[0], "twice") {
		t.Errorf("a tuple listed twice in the table: got problems %q", problems)
	}
	d := diff(table, granted)
	for _, want := range []string{"+ [cluster-wide] core/pods list", "- [cluster-wide] core/pods watch", "+ [cluster-wide] kubevirt.io/* get"} {
		if !strings.Contains(d, want) {
			t.Errorf("the diff lacks %q:%s", want, d)
		}
	}
	if strings.Contains(d, "core/pods get") {
		t.Errorf("the diff names a grant the table has:%s", d)
	}
}
