package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	"github.com/vireo-dev/vireo/test/bench/apimetrics"
	"github.com/vireo-dev/vireo/test/bench/measure"
)

// listCase is one list request shape the harness measures.
type listCase struct {
	Name string `json:"name"`
	// Path is the collection ("/apis/<group>/v1[/namespaces/<ns>]/virtualmachineinstances").
	Path  string     `json:"path"`
	Query url.Values `json:"query,omitempty"`
	// Paged lists 500 at a time, following continue tokens to the end.
	Paged bool `json:"paged"`
	// Protobuf asks for application/vnd.kubernetes.protobuf instead of JSON (Vireo only: a CRD
	// serves JSON alone).
	Protobuf bool `json:"protobuf,omitempty"`
	// Want is how many VMIs the list must return.
	Want int `json:"want"`
}

// listResult is a list case measured.
type listResult struct {
	listCase
	measure.Stats
	// Items is how many VMIs the list returned; Bytes how many bytes (all pages).
	Items int   `json:"items"`
	Bytes int64 `json:"bytes"`
}

// pageSize is the limit of paged lists (kubectl's default chunk size).
const pageSize = 500

// listCases are the lists of group's VMIs measured at size vmis: every namespace, one, a label
// selector, and a node's VMIs (nodeQuery), each unpaged and paged.
func listCases(group string, vmis, namespaces int, nodeQuery url.Values) []listCase {
	base := "/apis/" + group + "/v1"
	share := func(parts int) int { return vmis/parts + btoi(vmis%parts > 0) }
	oneNS := vmis/namespaces + btoi(vmis%namespaces > 0)
	label := url.Values{"labelSelector": {groupLabel + "=" + groupOf(0)}}
	var out []listCase
	for _, paged := range []bool{false, true} {
		out = append(out,
			listCase{Name: "all namespaces", Path: base + "/virtualmachineinstances", Paged: paged, Want: vmis},
			listCase{Name: "one namespace", Path: base + "/namespaces/" + namespaceName(0) + "/virtualmachineinstances", Paged: paged, Want: oneNS},
			listCase{Name: "label selector (1/100)", Path: base + "/virtualmachineinstances", Query: label, Paged: paged, Want: share(groups)},
			listCase{Name: "a node's VMIs", Path: base + "/virtualmachineinstances", Query: nodeQuery, Paged: paged, Want: -1})
	}
	return out
}

// withProtobuf is cases followed by each of them asked for in protobuf (so that the JSON cases
// keep their places, row by row against the CRD's).
func withProtobuf(cases []listCase) []listCase {
	out := append([]listCase(nil), cases...)
	for _, c := range cases {
		c.Protobuf = true
		out = append(out, c)
	}
	return out
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// runs is how many times a list of n objects is measured: more for small lists, at least 5.
func runs(n int) int { return max(5, min(50, 200000/max(n, 1))) }

// measureList times lc, each run from the request to the last byte of the last page, and
// checks the count. The client's counting of the items is not timed (it is the same for both
// targets), and the pages are read into buf, reused, so that nothing is allocated while timed.
func measureList(ctx context.Context, hc *http.Client, host string, lc listCase, buf *bytes.Buffer) (listResult, error) {
	n := runs(max(lc.Want, 1))
	lat := make([]time.Duration, n)
	var size int64
	var items int
	t0 := time.Now()
	for r := range n {
		start := time.Now()
		got, listBytes, err := list(ctx, hc, host, lc, buf)
		if err != nil {
			return listResult{}, fmt.Errorf("listing %s: %w", lc.Name, err)
		}
		lat[r], size, items = time.Since(start)-got.counting, listBytes, got.items
		if lc.Want >= 0 && got.items != lc.Want {
			return listResult{}, fmt.Errorf("listing %s returned %d VMIs, want %d", lc.Name, got.items, lc.Want)
		}
	}
	return listResult{listCase: lc, Stats: measure.Summarize(lat, time.Since(t0)), Items: items, Bytes: size}, nil
}

// listed is what one list (all its pages) returned.
type listed struct {
	items    int
	counting time.Duration
}

func list(ctx context.Context, hc *http.Client, host string, lc listCase, buf *bytes.Buffer) (listed, int64, error) {
	var out listed
	var size int64
	cont := ""
	for {
		q := url.Values{}
		for k, v := range lc.Query {
			q[k] = v
		}
		if lc.Paged {
			q.Set("limit", fmt.Sprint(pageSize))
			if cont != "" {
				q.Set("continue", cont)
			}
		}
		mediaType := runtime.ContentTypeJSON
		if lc.Protobuf {
			mediaType = runtime.ContentTypeProtobuf
		}
		if err := apimetrics.GetInto(ctx, hc, host+lc.Path+"?"+q.Encode(), mediaType, buf); err != nil {
			return out, size, err
		}
		size += int64(buf.Len())
		c0 := time.Now()
		items, next, err := countPage(buf.Bytes(), lc.Protobuf)
		if err != nil {
			return out, size, fmt.Errorf("reading the list: %w", err)
		}
		out.items += items
		out.counting += time.Since(c0)
		if cont = next; cont == "" || !lc.Paged {
			return out, size, nil
		}
	}
}

// measureLists measures every case into r, then the servers' memory (their peak RSS includes
// the lists').
func (e *env) measureLists(ctx context.Context, r *targetResult, cases []listCase) error {
	var err error
	if r.Lists, err = listAll(ctx, e.cl.cfg, cases); err != nil {
		return err
	}
	r.AfterLists, err = measureUsage(e.cluster)
	return err
}

// listAll measures every case.
func listAll(ctx context.Context, cfg *rest.Config, cases []listCase) ([]listResult, error) {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	var out []listResult
	var buf bytes.Buffer
	for _, lc := range cases {
		r, err := measureList(ctx, hc, cfg.Host, lc, &buf)
		if err != nil {
			return nil, err
		}
		say("  list %s%s: %d VMIs, p50 %.0f ms, p99 %.0f ms, %d KiB", lc.Name, lc.suffix(), r.Items, r.P50ms, r.P99ms, r.Bytes>>10)
		out = append(out, r)
	}
	return out, nil
}

// suffix says how the case lists: paged, in protobuf.
func (lc listCase) suffix() string {
	s := ""
	if lc.Paged {
		s = fmt.Sprintf(" (paged by %d)", pageSize)
	}
	if lc.Protobuf {
		s += ", protobuf"
	}
	return s
}
