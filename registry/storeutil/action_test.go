package storeutil

import (
	"net/http/httptest"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

func TestReadOptions(t *testing.T) {
	type opts struct {
		DryRun []string `json:"dryRun"`
	}
	read := func(body string) (opts, error) {
		var o opts
		err := ReadOptions(httptest.NewRequest("PUT", "/x", strings.NewReader(body)), "pause", "PauseOptions", &o)
		return o, err
	}
	if o, err := read(""); err != nil || o.DryRun != nil {
		t.Errorf("empty body: %+v, %v", o, err)
	}
	if o, err := read(`{"dryRun":["All"]}`); err != nil || len(o.DryRun) != 1 {
		t.Errorf("dry run: %+v, %v", o, err)
	}
	if _, err := read(`{"dryRun":"All"}`); !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), "PauseOptions") {
		t.Errorf("malformed body: %v, want 400 naming PauseOptions", err)
	}
	if _, err := read(strings.Repeat(" ", maxOptions+1)); !apierrors.IsRequestEntityTooLargeError(err) {
		t.Errorf("oversized body: %v, want 413", err)
	}
}

// TestDryRun: ["All"] is a dry run, none is not, and anything else is refused naming it.
func TestDryRun(t *testing.T) {
	for _, tc := range []struct {
		values  []string
		dry     bool
		refused bool
	}{
		{nil, false, false},
		{[]string{"All"}, true, false},
		{[]string{"all"}, false, true},
		{[]string{"All", "x"}, false, true},
	} {
		dry, err := DryRun("migrate", tc.values)
		if dry != tc.dry || (err != nil) != tc.refused || (err != nil && (!apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), "migrate: dryRun"))) {
			t.Errorf("DryRun(%q) = %v, %v", tc.values, dry, err)
		}
	}
}
