package images

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseSoftPre(t *testing.T) {
	cases := map[string][]string{
		"pre: crct10dif":              {"crct10dif"},
		"pre: a b-c post: d":          {"a", "b_c"},
		"post: d":                     nil,
		"post: x pre: crc64-rocksoft": {"crc64_rocksoft"},
	}
	for in, want := range cases {
		if got := parseSoftPre(in); !reflect.DeepEqual(got, want) {
			t.Errorf("parseSoftPre(%q) = %v, want %v", in, got, want)
		}
	}
}

func names(mods []module) string {
	var out []string
	for _, m := range mods {
		out = append(out, m.Name)
	}
	return strings.Join(out, " ")
}

func TestLoadOrder(t *testing.T) {
	// The virtio-net chain as Debian's 6.1 kernel declares it, a soft dependency, and a
	// dependency on a built-in module (absent from the map).
	mods := map[string]module{
		"virtio_ring":           {Name: "virtio_ring"},
		"virtio":                {Name: "virtio", Depends: []string{"virtio_ring"}},
		"virtio_pci_modern_dev": {Name: "virtio_pci_modern_dev"},
		"virtio_pci":            {Name: "virtio_pci", Depends: []string{"virtio_ring", "virtio_pci_modern_dev", "virtio"}},
		"failover":              {Name: "failover"},
		"net_failover":          {Name: "net_failover", Depends: []string{"failover"}},
		"virtio_net":            {Name: "virtio_net", Depends: []string{"virtio_ring", "virtio", "net_failover", "builtin_thing"}},
		"crc_t10dif":            {Name: "crc_t10dif", SoftPre: []string{"crct10dif_generic"}},
		"crct10dif_generic":     {Name: "crct10dif_generic"},
		"evdev":                 {Name: "evdev"},
	}
	got, err := loadOrder(mods, []string{"virtio-pci", "virtio_net", "crc_t10dif"})
	if err != nil {
		t.Fatal(err)
	}
	want := "virtio_ring virtio_pci_modern_dev virtio virtio_pci failover net_failover virtio_net crct10dif_generic crc_t10dif evdev"
	if names(got) != want {
		t.Errorf("load order\n got %s\nwant %s", names(got), want)
	}
}

func TestLoadOrderCycle(t *testing.T) {
	mods := map[string]module{
		"a": {Name: "a", Depends: []string{"b"}},
		"b": {Name: "b", Depends: []string{"a"}},
	}
	_, err := loadOrder(mods, []string{"a"})
	if err == nil || !strings.Contains(err.Error(), "a -> b -> a") {
		t.Errorf("got %v, want a cycle a -> b -> a", err)
	}
}
