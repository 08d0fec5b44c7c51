package podnet

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// List returns the Pods this node has network state for: a namespace, a cached CNI
// attachment or an allocated address. UID is always set; Namespace and Name when the cache
// has them. A node tears down those of Pods it no longer runs.
func (n *Network) List() ([]PodRef, error) {
	byUID := map[string]PodRef{}
	names, err := listNetns(n.netnsPrefix())
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		if uid := strings.TrimPrefix(name, n.netnsPrefix()); validUID(uid) {
			byUID[uid] = PodRef{UID: uid}
		}
	}
	atts, err := n.cni.GetCachedAttachments("")
	if err != nil {
		return nil, fmt.Errorf("pod network of node %s: reading the CNI cache: %w", n.cfg.NodeName, err)
	}
	for _, a := range atts {
		if a.Network != networkName || !validUID(a.ContainerID) {
			continue
		}
		ref := PodRef{UID: a.ContainerID}
		for _, kv := range a.CniArgs {
			switch kv[0] {
			case "K8S_POD_NAMESPACE":
				ref.Namespace = kv[1]
			case "K8S_POD_NAME":
				ref.Name = kv[1]
			}
		}
		byUID[ref.UID] = ref
	}
	allocated, err := n.allocatedUIDs()
	if err != nil {
		return nil, err
	}
	for _, uid := range allocated {
		if _, ok := byUID[uid]; !ok {
			byUID[uid] = PodRef{UID: uid}
		}
	}
	return sortedRefs(byUID), nil
}

// allocatedUIDs reads host-local's allocations: one file per address, named after it, whose
// first line is the container ID.
func (n *Network) allocatedUIDs() ([]string, error) {
	dir := filepath.Join(n.cfg.StateDir, "ipam", networkName)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("pod network of node %s: reading address allocations: %w", n.cfg.NodeName, err)
	}
	var uids []string
	for _, e := range entries {
		if net.ParseIP(e.Name()) == nil {
			continue // lock, last_reserved_ip.0
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		if uid := strings.TrimSpace(strings.SplitN(string(data), "\n", 2)[0]); validUID(uid) {
			uids = append(uids, uid)
		}
	}
	return uids, nil
}

func sortedRefs(byUID map[string]PodRef) []PodRef {
	refs := make([]PodRef, 0, len(byUID))
	for _, r := range byUID {
		refs = append(refs, r)
	}
	sort.Slice(refs, func(i, j int) bool { return refs[i].UID < refs[j].UID })
	return refs
}
