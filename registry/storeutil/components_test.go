package storeutil

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/apiserver/pkg/authentication/user"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
)

func TestIsVireoComponentNamesEachComponent(t *testing.T) {
	cases := []struct {
		name   string
		user   user.Info
		wantOK bool
	}{
		{"vireo-apiserver's loopback client", &user.DefaultInfo{Name: "system:apiserver", Groups: []string{"system:masters"}}, true},
		{"vireo-apiserver's ServiceAccount", sa("vireo-system", "vireo-apiserver"), true},
		{"vireo-controller's ServiceAccount", sa("vireo-system", "vireo-controller"), true},
		{"vireo-nodeagent's ServiceAccount", sa("vireo-system", "vireo-nodeagent"), true},
		{"another ServiceAccount of vireo-system", sa("vireo-system", "default"), false},
		{"a ServiceAccount named like a component in another namespace", sa("tenant", "vireo-controller"), false},
		{"a user in the group nothing issues", &user.DefaultInfo{Name: "mallory", Groups: []string{"vireo:components"}}, false},
		{"a cluster administrator", &user.DefaultInfo{Name: "admin", Groups: []string{"system:masters"}}, false},
		{"a name that only starts like a component's", &user.DefaultInfo{Name: "system:serviceaccount:vireo-system:vireo-controller-x"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := genericapirequest.WithUser(context.Background(), c.user)
			if got := IsVireoComponent(ctx); got != c.wantOK {
				t.Errorf("IsVireoComponent(%s %v) = %v, want %v", c.user.GetName(), c.user.GetGroups(), got, c.wantOK)
			}
		})
	}
	if IsVireoComponent(context.Background()) {
		t.Errorf("a request without a user counts as a component")
	}
}

func sa(namespace, name string) user.Info {
	return &user.DefaultInfo{Name: "system:serviceaccount:" + namespace + ":" + name,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"}}
}

// TestComponentUsersAreTheManifestsServiceAccounts keeps the list in step with the
// ServiceAccounts artifacts/base/rbac creates: each one listed, nothing more.
func TestComponentUsersAreTheManifestsServiceAccounts(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "artifacts", "base", "rbac", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no RBAC manifests found (%v)", err)
	}
	want := []string{user.APIServerUser}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
		for {
			var obj struct {
				Kind     string `json:"kind"`
				Metadata struct{ Name, Namespace string }
			}
			if err := dec.Decode(&obj); err == io.EOF {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if obj.Kind == "ServiceAccount" {
				want = append(want, "system:serviceaccount:"+obj.Metadata.Namespace+":"+obj.Metadata.Name)
			}
		}
	}
	got := slices.Clone(ComponentUsers)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("ComponentUsers %v, want the loopback user and the manifests' ServiceAccounts %v", got, want)
	}
}
