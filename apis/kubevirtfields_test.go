package apis

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"k8s.io/kube-openapi/pkg/validation/spec"

	corev1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/generated/openapi"
)

// kubevirtField is one line of testdata/kubevirt-v1-spec-fields.txt: a field path of KubeVirt's
// VMI or VM spec ("spec.domain.cpu.cores", "[]" for a list item) and its OpenAPI type.
type kubevirtField struct {
	kind, path, typ string
}

// kubevirtFields reads the field paths of KubeVirt's kubevirt.io/v1 VMI and VM specs, as
// KubeVirt's published OpenAPI declares them.
func kubevirtFields(t *testing.T) []kubevirtField {
	t.Helper()
	return readKubevirtFields(t, "testdata/kubevirt-v1-spec-fields.txt", 800)
}

// readKubevirtFields reads a list of field paths (at least least of them).
func readKubevirtFields(t *testing.T, file string, least int) []kubevirtField {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []kubevirtField
	kind := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if k, ok := strings.CutPrefix(line, "# v1."); ok {
			kind = k
			continue
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		path, typ, _ := strings.Cut(line, "\t")
		out = append(out, kubevirtField{kind: kind, path: path, typ: typ})
	}
	if err := sc.Err(); err != nil || len(out) < least {
		t.Fatalf("read %d field paths (%v)", len(out), err)
	}
	return out
}

// openAPIPaths walks Vireo's generated OpenAPI from a spec type and returns every field path,
// written as the list file writes them. Kubernetes' own types are not expanded (nor are they in
// the list).
func openAPIPaths(model string) map[string]bool {
	return openAPIPathsFrom(model, "spec")
}

// openAPIPathsFrom is openAPIPaths for a type found at root ("spec", "status").
func openAPIPathsFrom(model, root string) map[string]bool {
	defs := openapi.GetOpenAPIDefinitions(func(p string) spec.Ref { return spec.MustCreateRef(p) })
	paths := map[string]bool{}
	var walk func(prefix string, s spec.Schema, depth int)
	walk = func(prefix string, s spec.Schema, depth int) {
		if depth > 30 {
			return
		}
		if ref := s.Ref.String(); ref != "" {
			if d, ok := defs[ref]; ok && !strings.HasPrefix(ref, "io.k8s.") {
				walk(prefix, d.Schema, depth+1)
			}
			return
		}
		if s.Items != nil && s.Items.Schema != nil {
			paths[prefix+"[]"] = true
			walk(prefix+"[]", *s.Items.Schema, depth+1)
			return
		}
		for name, p := range s.Properties {
			paths[prefix+"."+name] = true
			walk(prefix+"."+name, p, depth+1)
		}
	}
	walk(root, defs[model].Schema, 0)
	return paths
}

// TestEveryKubeVirtSpecFieldIsInTheSchema: every field path of KubeVirt's VMI and VM specs is in
// Vireo's OpenAPI (so kubectl accepts it and kubectl explain shows it).
func TestEveryKubeVirtSpecFieldIsInTheSchema(t *testing.T) {
	schemas := map[string]map[string]bool{
		"VirtualMachineInstanceSpec": openAPIPaths(corev1.VirtualMachineInstanceSpec{}.OpenAPIModelName()),
		"VirtualMachineSpec":         openAPIPaths(corev1.VirtualMachineSpec{}.OpenAPIModelName()),
	}
	missing := 0
	for _, f := range kubevirtFields(t) {
		if !schemas[f.kind][f.path] {
			missing++
			t.Errorf("%s: %s (%s) is not in Vireo's OpenAPI", f.kind, f.path, f.typ)
		}
	}
	if missing > 0 {
		t.Logf("%d field paths missing", missing)
	}
}

// notInStatus are the status paths of KubeVirt's Vireo leaves out: the migration configuration a
// migration reports is the type of the KubeVirt CR's migration settings, where these fields would
// be settings Vireo does not honour.
var notInStatus = map[string]bool{}

func init() {
	for _, f := range []string{"nodeDrainTaintKey", "maxDowntimeMs", "utilityVolumesTimeout", "unsafeMigrationOverride", "disableTLS",
		"network", "matchSELinuxLevelOnMigration", "experimental"} {
		notInStatus["status.migrationState.migrationConfiguration."+f] = true
	}
}

// TestEveryKubeVirtStatusFieldIsInTheSchema: every field path of KubeVirt's VMI and VM status
// is in Vireo's OpenAPI (so a status KubeVirt's clients or controllers write is kept), but for
// notInStatus.
func TestEveryKubeVirtStatusFieldIsInTheSchema(t *testing.T) {
	schemas := map[string]map[string]bool{
		"VirtualMachineInstanceStatus": openAPIPathsFrom(corev1.VirtualMachineInstanceStatus{}.OpenAPIModelName(), "status"),
		"VirtualMachineStatus":         openAPIPathsFrom(corev1.VirtualMachineStatus{}.OpenAPIModelName(), "status"),
	}
	for _, f := range readKubevirtFields(t, "testdata/kubevirt-v1-status-fields.txt", 300) {
		left := false
		for p := range notInStatus {
			left = left || f.path == p || strings.HasPrefix(f.path, p+".")
		}
		if !schemas[f.kind][f.path] && !left {
			t.Errorf("%s: %s (%s) is not in Vireo's OpenAPI", f.kind, f.path, f.typ)
		}
	}
}

// TestEveryKubeVirtSpecFieldIsKept: each leaf field path of KubeVirt's VMI and VM specs, set
// alone, decodes strictly into Vireo's type and encodes again with the same value (a client's
// write is stored as written, not dropped).
func TestEveryKubeVirtSpecFieldIsKept(t *testing.T) {
	fields := kubevirtFields(t)
	hasChildren := map[string]bool{}
	for _, f := range fields {
		if i := strings.LastIndex(f.path, "."); i > 0 {
			hasChildren[f.kind+" "+f.path[:i]] = true
		}
	}
	for _, f := range fields {
		if hasChildren[f.kind+" "+f.path] {
			continue // not a leaf: its children are checked
		}
		doc := map[string]any{}
		setPath(t, doc, strings.ReplaceAll(strings.TrimPrefix(f.path, "spec."), "[]", "[0]"), sampleValue(f.typ))
		raw, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		var again []byte
		switch f.kind {
		case "VirtualMachineInstanceSpec":
			again = roundTripStrict[corev1.VirtualMachineInstanceSpec](t, raw)
		case "VirtualMachineSpec":
			again = roundTripStrict[corev1.VirtualMachineSpec](t, raw)
		}
		if again == nil {
			t.Errorf("%s %s: %s was refused", f.kind, f.path, raw)
			continue
		}
		var back map[string]any
		if err := json.Unmarshal(again, &back); err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(sampleValue(f.typ))
		got, _ := json.Marshal(readAt(back, strings.Split(strings.TrimPrefix(f.path, "spec."), ".")))
		if !jsonContains(got, want) {
			t.Errorf("%s %s: wrote %s, read back %s", f.kind, f.path, want, got)
		}
	}
}

// sampleValue is a value of an OpenAPI type as the list names it; of a list's item for an
// "array of" type (its path ends in "[]").
func sampleValue(typ string) any {
	switch typ {
	case "string":
		return "x"
	case "boolean":
		return true
	case "integer":
		return 2
	case "Quantity":
		return "1Gi"
	case "object":
		return map[string]any{"memory": "1Gi"}
	case "array of string":
		return "x"
	}
	return map[string]any{}
}

// readAt reads path ("a", "b[]", "c") from doc, taking the first item of each list; nil when
// absent.
func readAt(doc map[string]any, path []string) any {
	name, list := strings.CutSuffix(path[0], "[]")
	v, ok := doc[name]
	if !ok {
		return nil
	}
	if list {
		items, _ := v.([]any)
		if len(items) == 0 {
			return nil
		}
		v = items[0]
	}
	if len(path) == 1 {
		return v
	}
	m, _ := v.(map[string]any)
	if m == nil {
		return nil
	}
	return readAt(m, path[1:])
}

// roundTripStrict decodes raw into a T refusing unknown fields and encodes it again; nil when
// refused.
func roundTripStrict[T any](t *testing.T, raw []byte) []byte {
	t.Helper()
	var v T
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		t.Logf("decoding %s: %v", raw, err)
		return nil
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// jsonContains reports whether got holds want: equal scalars, or objects and lists whose
// written members are all there (encoding adds required fields at their zero values).
func jsonContains(got, want []byte) bool {
	var g, w any
	if json.Unmarshal(got, &g) != nil || json.Unmarshal(want, &w) != nil {
		return false
	}
	return contains(g, w)
}

func contains(g, w any) bool {
	switch w := w.(type) {
	case map[string]any:
		gm, ok := g.(map[string]any)
		if !ok {
			return false
		}
		for k, wv := range w {
			if !contains(gm[k], wv) {
				return false
			}
		}
		return true
	case []any:
		gl, ok := g.([]any)
		if !ok || len(gl) < len(w) {
			return false
		}
		for i := range w {
			if !contains(gl[i], w[i]) {
				return false
			}
		}
		return true
	case float64:
		gf, ok := g.(float64)
		return ok && gf == w
	default:
		return g == w
	}
}
