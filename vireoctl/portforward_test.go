package vireoctl

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericclioptions"
)

func TestParseForwardTarget(t *testing.T) {
	for _, c := range []struct {
		in, resource, namespace, name, wantErr string
	}{
		{"vm/web", "virtualmachines", "", "web", ""},
		{"VMI/web/prod", "virtualmachineinstances", "prod", "web", ""},
		{"virtualmachineinstances/web", "virtualmachineinstances", "", "web", ""},
		{"web", "", "", "", "want TYPE/NAME"},
		{"pod/web", "", "", "", `type "pod" must be vm or vmi`},
		{"vm/", "", "", "", "the name is empty"},
		{"vm/web/", "", "", "", "the namespace is empty"},
		{"vm/a/b/c", "", "", "", "want TYPE/NAME"},
	} {
		resource, namespace, name, err := parseForwardTarget(c.in)
		switch {
		case c.wantErr == "" && (err != nil || resource != c.resource || namespace != c.namespace || name != c.name):
			t.Errorf("%q: %q %q %q %v", c.in, resource, namespace, name, err)
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("%q: %v, want %q", c.in, err, c.wantErr)
		}
	}
}

func TestParseForwardedPorts(t *testing.T) {
	got, err := parseForwardedPorts([]string{"8080:80", "22", "udp/5353:53", "TCP/0:443"})
	want := []forwardedPort{{"tcp", 8080, 80}, {"tcp", 22, 22}, {"udp", 5353, 53}, {"tcp", 0, 443}}
	if err != nil || len(got) != len(want) {
		t.Fatalf("%v, %v", got, err)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("port %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	for arg, wantErr := range map[string]string{
		"sctp/80": `protocol "sctp" must be tcp or udp`,
		"x:80":    `local port "x" must be a number`,
		"80:0":    `remote port "0" must be a number from 1 to 65535`,
		"0":       "give the remote port",
		"70000":   "from 1 to 65535",
	} {
		if _, err := parseForwardedPorts([]string{arg}); err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("%q: %v, want %q", arg, err, wantErr)
		}
	}
}

func TestSSHArgs(t *testing.T) {
	flags := genericclioptions.NewConfigFlags(false)
	kubeconfig, ns := filepath.Join(t.TempDir(), "my kube%config"), "dev"
	if err := os.WriteFile(kubeconfig, []byte("apiVersion: v1\nkind: Config\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	flags.KubeConfig, flags.Namespace = &kubeconfig, &ns
	o := &sshOptions{port: 2222, identityFile: "id", localOptions: []string{"-o StrictHostKeyChecking=no"}, command: "uptime"}
	args, err := o.sshArgs(flags, "root@vm/web")
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(args, "|")
	for _, want := range []string{
		"' '--kubeconfig=" + strings.ReplaceAll(kubeconfig, "%", "%%") + "' 'port-forward' '--stdio' 'vm/web/dev' '2222'",
		"|-o|HostKeyAlias=vm.web.dev|-i|id|-o|StrictHostKeyChecking=no|root@vm.web.dev|--|uptime",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("ssh args %q lack %q", got, want)
		}
	}
	for target, wantErr := range map[string]string{"@vm/web": "user before '@' is empty", "root@web": "want TYPE/NAME", "pod/web": "must be vm or vmi"} {
		if _, err := o.sshArgs(flags, target); err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("%q: %v, want %q", target, err, wantErr)
		}
	}
}

func TestSCPArgs(t *testing.T) {
	flags := genericclioptions.NewConfigFlags(false)
	ns := "dev"
	flags.Namespace = &ns
	o := &scpOptions{sshOptions: sshOptions{port: 22, identityFile: "id"}, recursive: true}
	args, err := o.scpArgs(flags, "notes:v2.txt", "root@vmi/tiny:/tmp/")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(args, "|"); !strings.Contains(got, "'vmi/tiny/dev' '22'") ||
		!strings.HasSuffix(got, "|-o|HostKeyAlias=vmi.tiny.dev|-i|id|-r|--|notes:v2.txt|root@vmi.tiny.dev:/tmp/") {
		t.Errorf("upload args %q", got)
	}
	args, err = o.scpArgs(flags, "vm/web/prod:/var/log/app", "./logs")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(args, "|"); !strings.HasSuffix(got, "|--|vm.web.prod:/var/log/app|./logs") {
		t.Errorf("download args %q", got)
	}
	for _, c := range [][2]string{{"a", "b"}, {"vmi/x:/a", "vm/y:/b"}} {
		if _, err := o.scpArgs(flags, c[0], c[1]); err == nil {
			t.Errorf("scp %s %s: no error", c[0], c[1])
		}
	}
}
