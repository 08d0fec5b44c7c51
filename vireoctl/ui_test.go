package vireoctl

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"
)

// testKubeconfig writes a kubeconfig naming a server that is never reached.
func testKubeconfig(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	const kubeconfig = `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`
	if err := os.WriteFile(path, []byte(kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestUICommandRefusesANonLoopbackAddress(t *testing.T) {
	var out, errOut bytes.Buffer
	root := NewCommand(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	root.SetArgs([]string{"ui", "--kubeconfig", testKubeconfig(t), "--address", "0.0.0.0"})
	root.SetOut(&errOut)
	root.SetErr(&errOut)
	err := root.Execute()
	if err == nil || !strings.Contains(err.Error(), "loopback only") {
		t.Fatalf("vireoctl ui --address 0.0.0.0: %v, want a refusal saying loopback only", err)
	}
	if out.Len() != 0 {
		t.Errorf("printed %q on a refusal", out.String())
	}
}

func TestUICommandHasItsFlags(t *testing.T) {
	root := NewCommand(genericiooptions.IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard})
	ui, _, err := root.Find([]string{"ui"})
	if err != nil || ui.Name() != "ui" {
		t.Fatalf("no ui subcommand: %v", err)
	}
	for name, want := range map[string]string{"port": "0", "address": "127.0.0.1", "open": "false"} {
		f := ui.Flags().Lookup(name)
		if f == nil || f.DefValue != want {
			t.Errorf("--%s: %v, want default %s", name, f, want)
		}
	}
	if root.PersistentFlags().Lookup("as") == nil || root.PersistentFlags().Lookup("context") == nil {
		t.Error("the kubeconfig flags are missing")
	}
}

func TestUIPrintsItsURLAndServesTheEmbeddedConsole(t *testing.T) {
	outR, outW := io.Pipe()
	opened := make(chan string, 1)
	o := &uiOptions{address: "127.0.0.1", open: true, openURL: func(u string) error { opened <- u; return nil }}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- o.run(ctx, &rest.Config{Host: "https://127.0.0.1:1"}, genericiooptions.IOStreams{Out: outW, ErrOut: io.Discard})
	}()
	defer func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("run: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("run did not end within 10 s of its context's end")
		}
	}()
	line, err := bufio.NewReader(outR).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	url := strings.TrimSpace(line)
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.Contains(url, "/?token=") {
		t.Fatalf("printed %q, want http://127.0.0.1:PORT/?token=...", line)
	}
	select {
	case got := <-opened:
		if got != url {
			t.Errorf("--open opened %q, want %q", got, url)
		}
	case <-time.After(10 * time.Second):
		t.Error("--open opened nothing")
	}
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Jar: jar, Transport: &http.Transport{Proxy: nil}, Timeout: 30 * time.Second}
	// The printed URL first: it sets the cookie the asset then needs.
	for _, c := range []struct{ target, want string }{
		{url, "Vireo web console"},
		// The built console's or the placeholder's script (a build without make ui): both
		// list namespaces.
		{strings.Split(url, "?")[0] + "app.js", "namespaces"},
	} {
		target, want := c.target, c.want
		resp, err := client.Get(target)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK || !strings.Contains(string(body), want) {
			t.Errorf("GET %s: %d %q (%v), want 200 with %q", target, resp.StatusCode, body, err, want)
		}
	}
}
