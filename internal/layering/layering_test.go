package layering

import (
	"errors"
	"os/exec"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/vireo-dev/vireo/"

// shared are the packages (and those below them) every binary may link.
var shared = []string{"apis", "generated", "internal", "version", "kvm"}

// contracts are the packages two binaries speak through, which both may link although they
// live under one of them.
var contracts = []string{
	"importer/uploadapi",    // the upload protocol: importer, controller, node agent, vireoctl
	"importer/importerapi",  // the importer Pod's file, exit code, metric and usable size
	"importer/uploadclient", // the upload protocol's client: importer's clone sender and vireoctl
	"launcher/protocol",     // the launcher's gRPC API and its capabilities seed (and below)
}

// owners maps a top-level directory to the binaries whose packages it holds.
var owners = map[string][]string{
	"controllers":  {"vireo-controller"},
	"nodeagent":    {"vireo-nodeagent"},
	"apiserver":    {"vireo-apiserver"},
	"registry":     {"vireo-apiserver"},
	"launcher":     {"vireo-launcher"},
	"importer":     {"vireo-importer"},
	"vireoctl":     {"vireoctl", "kubectl-vireo"},
	"localcluster": {"vireo-local"},
	"imagebuild":   {"vireo-local"},
}

func TestBinariesLinkNoOtherBinarysPackages(t *testing.T) {
	deps, err := binaryDeps()
	if err != nil {
		t.Fatal(err)
	}
	if len(deps) < 5 {
		t.Fatalf("found %d binaries under cmd/, want them all: %v", len(deps), deps)
	}
	var bad []string
	for binary, pkgs := range deps {
		for _, pkg := range pkgs {
			if why := forbidden(binary, pkg); why != "" {
				bad = append(bad, binary+" links "+pkg+": "+why)
			}
		}
	}
	sort.Strings(bad)
	if len(bad) > 0 {
		t.Errorf("binaries link other binaries' packages (move what they share to internal/ or to a contract package):\n  %s", strings.Join(bad, "\n  "))
	}
}

// TestRulesCatchAnImport proves the rule refuses what it should and allows what it should.
func TestRulesCatchAnImport(t *testing.T) {
	for _, c := range []struct {
		binary, pkg string
		allowed     bool
	}{
		{"vireo-nodeagent", "controllers/launcherpod", false},
		{"vireo-controller", "importer", false},
		{"vireo-controller", "nodeagent/deviceplugin", false},
		{"vireo-nodeagent", "launcher/protocol/capsseed", true},
		{"vireo-controller", "importer/uploadapi", true},
		{"vireo-controller", "internal/launcherpodapi", true},
		{"vireo-controller", "controllers/vmi", true},
		{"vireoctl", "vireoctl", true},
		{"vireo-apiserver", "test/images", false},
		{"vireo-apiserver", "cmd/vireo-apiserver", true},
	} {
		if got := forbidden(c.binary, c.pkg) == ""; got != c.allowed {
			t.Errorf("%s linking %s: allowed %v, want %v", c.binary, c.pkg, got, c.allowed)
		}
	}
}

// forbidden says why binary may not link pkg (a path below the module), or "".
func forbidden(binary, pkg string) string {
	if pkg == "cmd/"+binary || strings.HasPrefix(pkg, "cmd/"+binary+"/") {
		return ""
	}
	for _, p := range append(shared, contracts...) {
		if pkg == p || strings.HasPrefix(pkg, p+"/") {
			return ""
		}
	}
	top, _, _ := strings.Cut(pkg, "/")
	own, known := owners[top]
	switch {
	case !known:
		return "it belongs to no binary and is not shared (test or development code?)"
	case !contains(own, binary):
		return "it belongs to " + strings.Join(own, ", ")
	}
	return ""
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// binaryDeps lists, per binary under cmd/, the module's packages it links (paths below the
// module, without the binary's own main package). go list prints a package once per call, so
// each binary gets a call of its own.
func binaryDeps() (map[string][]string, error) {
	mains, err := goList("list", module+"cmd/...")
	if err != nil {
		return nil, err
	}
	deps := map[string][]string{}
	for _, main := range mains {
		pkgs, err := goList("list", "-deps", main)
		if err != nil {
			return nil, err
		}
		binary := strings.TrimPrefix(main, module+"cmd/")
		for _, pkg := range pkgs {
			if rel, ok := strings.CutPrefix(pkg, module); ok && pkg != main {
				deps[binary] = append(deps[binary], rel)
			}
		}
	}
	return deps, nil
}

// goList runs the go command with args and returns its output's lines.
func goList(args ...string) ([]string, error) {
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return nil, errors.New("go " + strings.Join(args, " ") + ": " + string(ee.Stderr))
		}
		return nil, err
	}
	return strings.Fields(string(out)), nil
}

// TestEveryPackageSaysWhatItIs: every package with code (generated code and test-only packages
// aside) has a doc comment.
func TestEveryPackageSaysWhatItIs(t *testing.T) {
	pkgs, err := goList("list", "-f", "{{if and .GoFiles (not .Doc)}}{{.ImportPath}}{{end}}", module+"...")
	if err != nil {
		t.Fatal(err)
	}
	var missing []string
	for _, p := range pkgs {
		if !strings.HasPrefix(p, module+"generated/") {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		t.Errorf("packages without a doc comment (// Package x ...):\n  %s", strings.Join(missing, "\n  "))
	}
}
