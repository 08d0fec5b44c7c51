package main

import (
	"sort"

	"github.com/vireo-dev/vireo/test/bench/apimetrics"
)

// countedResources are the resources whose writes the benchmark counts, per server.
var countedResources = map[string]map[string]bool{
	"vireo-apiserver": {"virtualmachineinstances": true},
	"kube-apiserver":  {"pods": true},
}

// writes are the write requests between two scrapes.
type writes struct {
	// VMI counts writes to virtualmachineinstances (any subresource) on vireo-apiserver.
	VMI float64 `json:"vmiWrites"`
	// VMIPerVMI is VMI divided by the number of VMIs.
	VMIPerVMI float64 `json:"vmiWritesPerVMI"`
	// ByVireoPerVMI excludes the benchmark's own create and delete requests.
	ByVireoPerVMI float64 `json:"vmiWritesByVireoPerVMI"`
	// Conflicts are writes answered 409 (wasted).
	Conflicts float64 `json:"vmiConflicts"`
	// PodWritesPerVMI are writes to Pods (any subresource) on kube-apiserver per VMI.
	PodWritesPerVMI float64 `json:"podWritesPerVMI"`
	// Series lists every changed series ("server VERB resource/subresource (code)": count).
	Series map[string]float64 `json:"series"`
}

// delta returns the writes between before and after for n VMIs; ownCreates and ownDeletes are
// the benchmark's own requests among them.
func delta(before, after apimetrics.RequestCounts, n int, ownCreates, ownDeletes float64) writes {
	w := writes{Series: map[string]float64{}}
	keys := make([]apimetrics.RequestKey, 0, len(after))
	for k := range after {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
	var pods float64
	for _, k := range keys {
		d := after[k] - before[k]
		if d == 0 {
			continue
		}
		w.Series[k.String()] = d
		switch k.Server {
		case "vireo-apiserver":
			w.VMI += d
			if k.Code == "409" {
				w.Conflicts += d
			}
		case "kube-apiserver":
			pods += d
		}
	}
	w.VMIPerVMI = w.VMI / float64(n)
	w.ByVireoPerVMI = (w.VMI - ownCreates - ownDeletes) / float64(n)
	w.PodWritesPerVMI = pods / float64(n)
	return w
}
