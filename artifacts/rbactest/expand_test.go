package rbactest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// bootstrapClusterRoles and bootstrapRoles (namespace/name) are the roles of Kubernetes'
// bootstrap policy the files bind (k8s.io/kubernetes plugin/pkg/auth/authorizer/rbac/
// bootstrappolicy), with their rules.
var (
	bootstrapClusterRoles = map[string][]rbacv1.PolicyRule{
		"system:auth-delegator": {
			{Verbs: s("create"), APIGroups: s("authentication.k8s.io"), Resources: s("tokenreviews")},
			{Verbs: s("create"), APIGroups: s("authorization.k8s.io"), Resources: s("subjectaccessreviews")},
		},
	}
	bootstrapRoles = map[string][]rbacv1.PolicyRule{
		kubeSystem + "/extension-apiserver-authentication-reader": {
			{Verbs: s("get", "list", "watch"), APIGroups: s(core), Resources: s("configmaps"), ResourceNames: s("extension-apiserver-authentication")},
		},
	}
)

// tuple is one permission: a verb on a resource (or a non-resource URL) in a scope, for one
// name or (name "") all of them.
type tuple struct {
	ns, group, resource, verb, name string
	nonResource                     bool
}

func (t tuple) String() string {
	if t.nonResource {
		return fmt.Sprintf("[nonResourceURL] %s %s", t.resource, t.verb)
	}
	group := t.group
	if group == core {
		group = "core"
	}
	ns := t.ns
	if ns == all {
		ns = "cluster-wide"
	}
	str := fmt.Sprintf("[%s] %s/%s %s", ns, group, t.resource, t.verb)
	if t.name != "" {
		str += " (name " + t.name + ")"
	}
	return str
}

// rules is a role's rules and where it comes from.
type rules struct {
	rules  []rbacv1.PolicyRule
	source string
}

// policy is what the files hold.
type policy struct {
	serviceAccounts map[string]string // namespace/name -> file
	clusterRoles    map[string]rules  // name
	roles           map[string]rules  // namespace/name
	crbs            []fileObject[rbacv1.ClusterRoleBinding]
	rbs             []fileObject[rbacv1.RoleBinding]
}

type fileObject[T any] struct {
	file string
	obj  T
}

// diff lists, per ServiceAccount, the tuples granted but not in the table (+) and those in the
// table but not granted (-); "" when they match.
func diff(want map[string]map[tuple]string, granted map[string]map[tuple][]string) string {
	var out strings.Builder
	for _, sa := range union(sortedKeys(want), sortedKeys(granted)) {
		var extra, missing []string
		for tp, sources := range granted[sa] {
			if _, ok := want[sa][tp]; !ok {
				extra = append(extra, fmt.Sprintf("    + %s    <- %s", tp, strings.Join(sources, "; ")))
			}
		}
		for tp, why := range want[sa] {
			if _, ok := granted[sa][tp]; !ok {
				missing = append(missing, fmt.Sprintf("    - %s    <- needed by %s", tp, why))
			}
		}
		if len(extra) == 0 && len(missing) == 0 {
			continue
		}
		sort.Strings(extra)
		sort.Strings(missing)
		fmt.Fprintf(&out, "\nServiceAccount %s:\n", sa)
		if len(extra) > 0 {
			out.WriteString("  granted, but no code calls it (least privilege: remove it from the YAML, or add the code's entry to the table):\n")
			out.WriteString(strings.Join(extra, "\n") + "\n")
		}
		if len(missing) > 0 {
			out.WriteString("  called by the code, but not granted (add it to the YAML, or drop the entry if the call is gone):\n")
			out.WriteString(strings.Join(missing, "\n") + "\n")
		}
	}
	return out.String()
}

// expandTable turns the table's entries into tuples with their why, per ServiceAccount. A tuple
// listed twice, or an entry that names no code, is a problem.
func expandTable(table map[string][]grant) (map[string]map[tuple]string, []string) {
	out := map[string]map[tuple]string{}
	var problems []string
	for _, sa := range sortedKeys(table) {
		out[sa] = map[tuple]string{}
		for _, g := range table[sa] {
			if g.why == "" {
				problems = append(problems, fmt.Sprintf("%s: the table entry %q %v %v names no code", sa, g.group, g.resources, g.verbs))
			}
			names := g.names
			if len(names) == 0 {
				names = []string{""}
			}
			for _, r := range g.resources {
				for _, v := range g.verbs {
					for _, n := range names {
						tp := tuple{ns: g.ns, group: g.group, resource: r, verb: v, name: n}
						if prev, ok := out[sa][tp]; ok {
							problems = append(problems, fmt.Sprintf("%s: the table lists %s twice (%q and %q)", sa, tp, prev, g.why))
						}
						out[sa][tp] = g.why
					}
				}
			}
		}
	}
	return out, problems
}

// grants expands every binding into the tuples it grants each ServiceAccount, with the
// bindings and roles that grant them.
func (p *policy) grants() (map[string]map[tuple][]string, []string) {
	out := map[string]map[tuple][]string{}
	var problems []string
	bind := func(via string, scope string, subjects []rbacv1.Subject, r rules) {
		source := via + " -> " + r.source
		tuples, rp := expandRules(source, scope, r.rules)
		problems = append(problems, rp...)
		for _, subj := range subjects {
			if subj.Kind != rbacv1.ServiceAccountKind || subj.APIGroup != "" {
				problems = append(problems, fmt.Sprintf("%s binds %s %q (apiGroup %q): the component files bind only ServiceAccounts", via, subj.Kind, subj.Name, subj.APIGroup))
				continue
			}
			if subj.Namespace == "" {
				problems = append(problems, fmt.Sprintf("%s binds ServiceAccount %q without a namespace", via, subj.Name))
				continue
			}
			sa := subj.Namespace + "/" + subj.Name
			if out[sa] == nil {
				out[sa] = map[tuple][]string{}
			}
			for _, tp := range tuples {
				if slices.Contains(out[sa][tp], source) {
					problems = append(problems, fmt.Sprintf("%s: %s is granted twice by %s", sa, tp, source))
					continue
				}
				out[sa][tp] = append(out[sa][tp], source)
			}
		}
	}
	for _, b := range p.crbs {
		via := fmt.Sprintf("%s ClusterRoleBinding %s", b.file, b.obj.Name)
		ref := b.obj.RoleRef
		if ref.APIGroup != rbacv1.GroupName || ref.Kind != "ClusterRole" {
			problems = append(problems, fmt.Sprintf("%s: roleRef %s %s (apiGroup %q) is not a ClusterRole of %s", via, ref.Kind, ref.Name, ref.APIGroup, rbacv1.GroupName))
			continue
		}
		r, ok := p.clusterRole(ref.Name)
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: ClusterRole %s is defined neither in the files nor in the bootstrap policy known to this test", via, ref.Name))
			continue
		}
		bind(via, all, b.obj.Subjects, r)
	}
	for _, b := range p.rbs {
		via := fmt.Sprintf("%s RoleBinding %s/%s", b.file, b.obj.Namespace, b.obj.Name)
		ref := b.obj.RoleRef
		if ref.APIGroup != rbacv1.GroupName {
			problems = append(problems, fmt.Sprintf("%s: roleRef apiGroup %q is not %s", via, ref.APIGroup, rbacv1.GroupName))
			continue
		}
		var r rules
		var ok bool
		switch ref.Kind {
		case "Role":
			r, ok = p.role(b.obj.Namespace, ref.Name)
		case "ClusterRole":
			r, ok = p.clusterRole(ref.Name)
		default:
			problems = append(problems, fmt.Sprintf("%s: roleRef kind %q", via, ref.Kind))
			continue
		}
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: %s %s is defined neither in the files (in namespace %s) nor in the bootstrap policy known to this test", via, ref.Kind, ref.Name, b.obj.Namespace))
			continue
		}
		// A ClusterRole bound by a RoleBinding grants its rules in the binding's namespace only.
		bind(via, b.obj.Namespace, b.obj.Subjects, r)
	}
	return out, problems
}

func (p *policy) clusterRole(name string) (rules, bool) {
	if r, ok := p.clusterRoles[name]; ok {
		return r, true
	}
	if r, ok := bootstrapClusterRoles[name]; ok {
		return rules{r, "ClusterRole " + name + " (bootstrap policy)"}, true
	}
	return rules{}, false
}

func (p *policy) role(ns, name string) (rules, bool) {
	if r, ok := p.roles[ns+"/"+name]; ok {
		return r, true
	}
	if r, ok := bootstrapRoles[ns+"/"+name]; ok {
		return rules{r, "Role " + ns + "/" + name + " (bootstrap policy)"}, true
	}
	return rules{}, false
}

// expandRules lists the tuples rs grant in scope (a namespace, or all). A wildcard anywhere is
// a problem: it grants what no table can check. (Its tuples are kept, so that the diff shows
// them too.)
func expandRules(source, scope string, rs []rbacv1.PolicyRule) ([]tuple, []string) {
	var out []tuple
	var problems []string
	for i, r := range rs {
		where := fmt.Sprintf("%s rule %d", source, i+1)
		for _, field := range []struct {
			name   string
			values []string
		}{{"apiGroups", r.APIGroups}, {"resources", r.Resources}, {"verbs", r.Verbs}, {"resourceNames", r.ResourceNames}, {"nonResourceURLs", r.NonResourceURLs}} {
			for _, v := range field.values {
				if strings.Contains(v, "*") {
					problems = append(problems, fmt.Sprintf("%s: wildcard %q in %s: name each one the code needs (least privilege)", where, v, field.name))
				}
			}
		}
		if len(r.Verbs) == 0 {
			problems = append(problems, fmt.Sprintf("%s: no verbs", where))
		}
		if len(r.NonResourceURLs) > 0 {
			if len(r.APIGroups)+len(r.Resources)+len(r.ResourceNames) > 0 {
				problems = append(problems, fmt.Sprintf("%s: mixes nonResourceURLs with resources", where))
			}
			if scope != all {
				problems = append(problems, fmt.Sprintf("%s: nonResourceURLs are granted only through a ClusterRoleBinding", where))
			}
			for _, u := range r.NonResourceURLs {
				for _, v := range r.Verbs {
					out = append(out, tuple{ns: all, resource: u, verb: v, nonResource: true})
				}
			}
			continue
		}
		if len(r.APIGroups) == 0 || len(r.Resources) == 0 {
			problems = append(problems, fmt.Sprintf("%s: names no apiGroups or no resources, so grants nothing", where))
		}
		names := r.ResourceNames
		if len(names) == 0 {
			names = []string{""}
		}
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					for _, n := range names {
						out = append(out, tuple{ns: scope, group: g, resource: res, verb: v, name: n})
					}
				}
			}
		}
	}
	return out, problems
}

// load reads the RBAC files (names relative to rbacDir, or absolute).
func load(names []string) (*policy, []string) {
	p := &policy{serviceAccounts: map[string]string{}, clusterRoles: map[string]rules{}, roles: map[string]rules{}}
	var problems []string
	for _, name := range names {
		path := name
		if !filepath.IsAbs(path) {
			path = filepath.Join(rbacDir, name)
		}
		docs, err := documents(path)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", name, err))
			continue
		}
		for i, doc := range docs {
			if err := p.add(filepath.Base(name), doc); err != nil {
				problems = append(problems, fmt.Sprintf("%s document %d: %v", name, i+1, err))
			}
		}
	}
	return p, problems
}

// add decodes one document (strictly: an unknown field is an error) into p.
func (p *policy) add(file string, doc []byte) error {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &tm); err != nil {
		return err
	}
	switch tm.APIVersion + " " + tm.Kind {
	case "v1 ServiceAccount":
		var sa corev1.ServiceAccount
		if err := yaml.UnmarshalStrict(doc, &sa); err != nil {
			return err
		}
		if sa.Namespace == "" {
			return fmt.Errorf("ServiceAccount %s names no namespace", sa.Name)
		}
		key := sa.Namespace + "/" + sa.Name
		if prev, ok := p.serviceAccounts[key]; ok {
			return fmt.Errorf("ServiceAccount %s is also defined in %s", key, prev)
		}
		p.serviceAccounts[key] = file
	case "rbac.authorization.k8s.io/v1 ClusterRole":
		var cr rbacv1.ClusterRole
		if err := yaml.UnmarshalStrict(doc, &cr); err != nil {
			return err
		}
		if cr.AggregationRule != nil {
			return fmt.Errorf("ClusterRole %s aggregates other roles: its rules cannot be audited here", cr.Name)
		}
		if _, ok := bootstrapClusterRoles[cr.Name]; ok {
			return fmt.Errorf("ClusterRole %s redefines a bootstrap role", cr.Name)
		}
		if _, ok := p.clusterRoles[cr.Name]; ok {
			return fmt.Errorf("ClusterRole %s is defined twice", cr.Name)
		}
		p.clusterRoles[cr.Name] = rules{cr.Rules, fmt.Sprintf("%s ClusterRole %s", file, cr.Name)}
	case "rbac.authorization.k8s.io/v1 Role":
		var r rbacv1.Role
		if err := yaml.UnmarshalStrict(doc, &r); err != nil {
			return err
		}
		if r.Namespace == "" {
			return fmt.Errorf("role %s names no namespace (the files apply without kustomize)", r.Name)
		}
		key := r.Namespace + "/" + r.Name
		if _, ok := bootstrapRoles[key]; ok {
			return fmt.Errorf("role %s redefines a bootstrap role", key)
		}
		if _, ok := p.roles[key]; ok {
			return fmt.Errorf("role %s is defined twice", key)
		}
		p.roles[key] = rules{r.Rules, fmt.Sprintf("%s Role %s", file, key)}
	case "rbac.authorization.k8s.io/v1 ClusterRoleBinding":
		var b rbacv1.ClusterRoleBinding
		if err := yaml.UnmarshalStrict(doc, &b); err != nil {
			return err
		}
		p.crbs = append(p.crbs, fileObject[rbacv1.ClusterRoleBinding]{file, b})
	case "rbac.authorization.k8s.io/v1 RoleBinding":
		var b rbacv1.RoleBinding
		if err := yaml.UnmarshalStrict(doc, &b); err != nil {
			return err
		}
		if b.Namespace == "" {
			return fmt.Errorf("RoleBinding %s names no namespace (the files apply without kustomize)", b.Name)
		}
		p.rbs = append(p.rbs, fileObject[rbacv1.RoleBinding]{file, b})
	default:
		return fmt.Errorf("unexpected object %s %s in an RBAC file", tm.APIVersion, tm.Kind)
	}
	return nil
}

// documents splits a multi-document YAML file, leaving out documents holding only comments.
func documents(path string) ([][]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := utilyaml.NewYAMLReader(bufio.NewReader(f))
	var docs [][]byte
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		js, err := yaml.YAMLToJSON(doc)
		if err != nil {
			return nil, err
		}
		if js = bytes.TrimSpace(js); len(js) == 0 || string(js) == "null" {
			continue
		}
		docs = append(docs, doc)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func union(a, b []string) []string {
	out := slices.Concat(a, b)
	sort.Strings(out)
	return slices.Compact(out)
}
