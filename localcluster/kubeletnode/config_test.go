package kubeletnode

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"sigs.k8s.io/yaml"
)

func testConfig() Config {
	return Config{Name: "vireo-local-0", Address: "10.250.0.10", Dir: "/x/nodes/vireo-local-0", BinDir: "/x/bin",
		CNIBinDir: "/usr/lib/cni", Registry: "10.250.0.1:5000", PauseImage: "10.250.0.1:5000/vireo/pause:latest",
		CgroupRoot: "/vireo-local-0", ClientCAFile: "/x/pki/ca.crt", TLSCertFile: "/x/pki/s.crt", TLSKeyFile: "/x/pki/s.key", CgroupV1: true}
}

// TestContainerdConfig parses the rendered config.toml and checks what this host needs.
func TestContainerdConfig(t *testing.T) {
	var got map[string]any
	if _, err := toml.Decode(Containerd(testConfig()), &got); err != nil {
		t.Fatalf("config.toml does not parse: %v\n%s", err, Containerd(testConfig()))
	}
	get := func(path ...string) any {
		var v any = got
		for _, p := range path {
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[p]
		}
		return v
	}
	runtime := []string{"plugins", "io.containerd.cri.v1.runtime"}
	checks := []struct {
		path []string
		want any
	}{
		{[]string{"version"}, int64(3)},
		{[]string{"root"}, "/x/nodes/vireo-local-0/containerd"},
		{[]string{"grpc", "address"}, RuntimeSocket},
		{append(runtime, "restrict_oom_score_adj"), true},
		{append(runtime, "device_ownership_from_security_context"), true},
		{append(runtime, "cni", "conf_template"), "/x/nodes/vireo-local-0/cni/template.json"},
		{append(runtime, "containerd", "runtimes", "runc", "options", "BinaryName"), "/x/bin/runc"},
		{[]string{"plugins", "io.containerd.cri.v1.images", "pinned_images", "sandbox"}, "10.250.0.1:5000/vireo/pause:latest"},
		{[]string{"plugins", "io.containerd.cri.v1.images", "registry", "config_path"}, "/x/nodes/vireo-local-0/registry-hosts"},
	}
	for _, c := range checks {
		if v := get(c.path...); v != c.want {
			t.Errorf("%s = %#v, want %#v", strings.Join(c.path, "."), v, c.want)
		}
	}
}

func TestRegistryHosts(t *testing.T) {
	var got map[string]any
	if _, err := toml.Decode(RegistryHosts(testConfig()), &got); err != nil {
		t.Fatal(err)
	}
	if got["server"] != "http://10.250.0.1:5000" {
		t.Errorf("server = %v", got["server"])
	}
}

func TestCNITemplateIsJSONWithThePodCIDRPlaceholder(t *testing.T) {
	s := CNITemplate(testConfig())
	var conf struct {
		Plugins []map[string]any `json:"plugins"`
	}
	if err := json.Unmarshal([]byte(s), &conf); err != nil {
		t.Fatal(err)
	}
	if len(conf.Plugins) == 0 || conf.Plugins[0]["type"] != "bridge" || conf.Plugins[0]["ipMasq"] != false {
		t.Errorf("plugins: %v", conf.Plugins)
	}
	if !strings.Contains(s, `"subnet": "{{.PodCIDR}}"`) || !strings.Contains(s, "/x/nodes/vireo-local-0/cni/ipam") {
		t.Errorf("template lacks the Pod CIDR placeholder or the node's IPAM directory:\n%s", s)
	}
}

func TestKubeletConfig(t *testing.T) {
	for _, v1 := range []bool{true, false} {
		cfg := testConfig()
		cfg.CgroupV1 = v1
		// Every field is one the kubelet knows: it only warns of an unknown one and runs on
		// without it.
		var typed kubeletv1beta1.KubeletConfiguration
		if err := yaml.UnmarshalStrict([]byte(Kubelet(cfg)), &typed); err != nil {
			t.Errorf("kubelet config has a field KubeletConfiguration does not: %v", err)
		}
		var got map[string]any
		if err := yaml.Unmarshal([]byte(Kubelet(cfg)), &got); err != nil {
			t.Fatalf("kubelet config does not parse: %v", err)
		}
		want := map[string]any{"kind": "KubeletConfiguration", "cgroupDriver": "cgroupfs", "cgroupRoot": "/vireo-local-0",
			"readOnlyPort": float64(0), "tlsCertFile": "/x/pki/s.crt", "containerRuntimeEndpoint": "unix://" + RuntimeSocket,
			"resolvConf": "/x/nodes/vireo-local-0/resolv.conf", "podLogsDir": "/x/nodes/vireo-local-0/pods-logs"}
		for k, w := range want {
			if got[k] != w {
				t.Errorf("%s = %#v, want %#v", k, got[k], w)
			}
		}
		if anon := got["authentication"].(map[string]any)["anonymous"].(map[string]any)["enabled"]; anon != false {
			t.Errorf("anonymous authentication = %v", anon)
		}
		if got["authorization"].(map[string]any)["mode"] != "Webhook" {
			t.Errorf("authorization = %v", got["authorization"])
		}
		if _, has := got["failCgroupV1"]; has != v1 {
			t.Errorf("cgroup v1 %v: failCgroupV1 present %v", v1, has)
		}
		if _, has := got["systemReserved"]; has {
			t.Errorf("a single node reserves %v", got["systemReserved"])
		}
	}
	cfg := testConfig()
	cfg.ReservedMilliCPU, cfg.ReservedMemory = HostShare(2, 24<<30, 2)
	var got map[string]any
	if err := yaml.Unmarshal([]byte(Kubelet(cfg)), &got); err != nil {
		t.Fatalf("kubelet config does not parse: %v", err)
	}
	want := map[string]any{"cpu": "1000m", "memory": "12884901888"}
	if r, _ := got["systemReserved"].(map[string]any); fmt.Sprint(r) != fmt.Sprint(want) {
		t.Errorf("systemReserved of one of two nodes on 2 CPUs and 24 GiB = %v, want %v", got["systemReserved"], want)
	}
}

func TestHostShare(t *testing.T) {
	for _, c := range []struct {
		cpus, nodes  int
		memory       int64
		wantMilliCPU int64
		wantMemory   int64
	}{
		{cpus: 2, nodes: 1, memory: 24 << 30},
		{cpus: 2, nodes: 2, memory: 24 << 30, wantMilliCPU: 1000, wantMemory: 12 << 30},
		{cpus: 2, nodes: 3, memory: 3000, wantMilliCPU: 1333, wantMemory: 2000},
		{cpus: 8, nodes: 4, memory: 4 << 30, wantMilliCPU: 6000, wantMemory: 3 << 30},
	} {
		cpu, mem := HostShare(c.cpus, c.memory, c.nodes)
		if cpu != c.wantMilliCPU || mem != c.wantMemory {
			t.Errorf("HostShare(%d, %d, %d) = %d, %d; want %d, %d", c.cpus, c.memory, c.nodes, cpu, mem, c.wantMilliCPU, c.wantMemory)
		}
	}
}
