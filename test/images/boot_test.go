package images

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vireo-dev/vireo/internal/testsupport"
)

// Guests boot under TCG on two shared cores: generous deadlines, never timed assertions.
const (
	bootTimeout    = 90 * time.Second
	commandTimeout = 30 * time.Second
	powerTimeout   = 60 * time.Second
)

var (
	markerRE  = regexp.MustCompile(`(?m)^` + Marker + `\r?$`)
	guestUpRE = regexp.MustCompile(`vireo-guest: ready ([0-9.]+) s after the kernel started`)
)

// logBootTime logs how long the guest took to its marker, from QEMU's start and by the guest's
// own clock (for the record: nothing is asserted about it).
func logBootTime(t *testing.T, v *vm, start time.Time) {
	t.Helper()
	up := "?"
	if m := guestUpRE.FindStringSubmatch(v.output()); m != nil {
		up = m[1]
	}
	t.Logf("%s after %s from QEMU's start, %s s of guest uptime", Marker, time.Since(start).Round(100*time.Millisecond), up)
}

// built builds (or finds up to date) the guest in the repository's _output/images.
func built(t *testing.T) Result {
	t.Helper()
	if testing.Short() {
		t.Skip("boots a guest under QEMU; skipped with -short")
	}
	out, err := RepoOutput()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	res, err := Build(ctx, Options{Out: out, Log: testLog{t}})
	if err != nil {
		t.Fatalf("building the guest: %v", err)
	}
	return res
}

type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// seedISO writes a NoCloud seed as KubeVirt's cloudInitNoCloud makes it (ISO9660, volume
// label cidata, user-data and meta-data) whose user-data prints a fresh token, and returns
// the ISO's path and the token.
func seedISO(t *testing.T, hostname string) (string, string) {
	t.Helper()
	if _, err := exec.LookPath("genisoimage"); err != nil {
		t.Fatalf("genisoimage not found (Debian package genisoimage): run hack/install-deps.sh")
	}
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	token := "USERDATA-" + hex.EncodeToString(b)
	dir := t.TempDir()
	files := map[string]string{
		"user-data": "#!/bin/sh\necho " + token + "\n",
		"meta-data": "instance-id: vireo-test\nlocal-hostname: " + hostname + "\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	iso := filepath.Join(t.TempDir(), "seed.iso")
	cmd := exec.Command("genisoimage", "-quiet", "-output", iso, "-volid", "cidata", "-joliet", "-rock",
		filepath.Join(dir, "user-data"), filepath.Join(dir, "meta-data"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("genisoimage: %v: %s", err, out)
	}
	return iso, token
}

// TestBootDisk boots disk.raw from SeaBIOS, with a NIC on QEMU's user network (port 80
// forwarded from loopback) and a NoCloud seed as an IDE CD-ROM, and checks what the guest
// promises: the marker, the user-data's output, a working console shell, HTTP on port 80, text
// on the VGA console, and a clean power-off on the ACPI power button.
func TestBootDisk(t *testing.T) {
	res := built(t)
	iso, token := seedISO(t, "seeded-guest")
	port := testsupport.FreePort(t)
	start := time.Now()
	v := startVM(t,
		"-drive", "file="+res.Path(DiskRaw)+",format=raw,if=virtio,readonly=on",
		"-drive", "file="+iso+",media=cdrom,if=ide,readonly=on",
		"-netdev", fmt.Sprintf("user,id=net0,hostfwd=tcp:127.0.0.1:%d-:80", port),
		"-device", "virtio-net-pci,netdev=net0")
	at := v.waitFor(markerRE, 0, bootTimeout)
	logBootTime(t, v, start)
	v.waitFor(regexp.MustCompile(`(?m)^`+token+`\r?$`), 0, commandTimeout)

	v.typeLine("echo $((6*7)) $(hostname)")
	v.waitFor(regexp.MustCompile(`(?m)^42 seeded-guest\r?$`), at, commandTimeout)

	body := httpGet(t, fmt.Sprintf("http://127.0.0.1:%d/", port))
	if want := "vireo-tiny-guest seeded-guest"; !strings.Contains(body, want) {
		t.Errorf("GET / through the forwarded port: got %q, want it to contain %q", body, want)
	}

	checkVGAText(t, v)

	if _, err := v.qmpCommand("system_powerdown", nil); err != nil {
		t.Fatal(err)
	}
	if err := v.waitExit(powerTimeout); err != nil {
		t.Errorf("QEMU exited with %v after the guest powered off; want status 0", err)
	}
	if !strings.Contains(v.output(), "power button pressed") {
		t.Errorf("the guest did not report the power button before QEMU exited")
	}
}

// TestKernelBoot boots the kernel and initramfs directly (kernelBoot) with the NoCloud seed on
// a virtio disk, as KubeVirt attaches cloudInitNoCloud by default.
func TestKernelBoot(t *testing.T) {
	res := built(t)
	iso, token := seedISO(t, "kernelboot")
	start := time.Now()
	v := startVM(t, "-kernel", res.Path(Kernel), "-initrd", res.Path(Initrd), "-append", KernelCmdline,
		"-drive", "file="+iso+",format=raw,if=virtio,readonly=on")
	v.waitFor(markerRE, 0, bootTimeout)
	logBootTime(t, v, start)
	v.waitFor(regexp.MustCompile(`(?m)^`+token+`\r?$`), 0, commandTimeout)
}

// httpGet fetches url, retrying until a deadline (the forwarded port accepts connections
// before the guest's httpd does).
func httpGet(t *testing.T, url string) string {
	t.Helper()
	client := &http.Client{Timeout: 10 * time.Second}
	deadline := time.Now().Add(commandTimeout)
	for {
		resp, err := client.Get(url)
		if err == nil {
			b, rerr := io.ReadAll(resp.Body)
			resp.Body.Close()
			if rerr == nil && resp.StatusCode == http.StatusOK {
				return string(b)
			}
			err = fmt.Errorf("HTTP %d, %v", resp.StatusCode, rerr)
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s: %v", url, err)
		}
		<-time.After(200 * time.Millisecond) // poll interval under the deadline above
	}
}

// checkVGAText takes a screendump and checks that the VGA console shows something: the
// guest's text is light grey on black, so the screen must hold both.
func checkVGAText(t *testing.T, v *vm) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "screen.ppm")
	if _, err := v.qmpCommand("screendump", map[string]any{"filename": path}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pixels, err := ppmPixels(b)
	if err != nil {
		t.Fatal(err)
	}
	dark, light := 0, 0
	for i := 0; i+2 < len(pixels); i += 3 {
		sum := int(pixels[i]) + int(pixels[i+1]) + int(pixels[i+2])
		switch {
		case sum < 60:
			dark++
		case sum > 300:
			light++
		}
	}
	if light == 0 || dark == 0 {
		t.Errorf("the VGA console shows no text (%d light and %d dark pixels)", light, dark)
	}
}

// ppmPixels returns the RGB bytes of a binary PPM (P6) image.
func ppmPixels(b []byte) ([]byte, error) {
	// Header: "P6" width height maxval, whitespace separated, then one whitespace byte.
	fields, pos := []string{}, 0
	for len(fields) < 4 && pos < len(b) {
		for pos < len(b) && (b[pos] == ' ' || b[pos] == '\n' || b[pos] == '\r' || b[pos] == '\t') {
			pos++
		}
		start := pos
		for pos < len(b) && b[pos] != ' ' && b[pos] != '\n' && b[pos] != '\r' && b[pos] != '\t' {
			pos++
		}
		fields = append(fields, string(b[start:pos]))
	}
	if len(fields) != 4 || fields[0] != "P6" || pos >= len(b) {
		return nil, fmt.Errorf("not a binary PPM image")
	}
	w, _ := strconv.Atoi(fields[1])
	h, _ := strconv.Atoi(fields[2])
	pixels := b[pos+1:]
	if w <= 0 || h <= 0 || len(pixels) < w*h*3 {
		return nil, fmt.Errorf("PPM image of %sx%s has %d bytes of pixels", fields[1], fields[2], len(pixels))
	}
	return pixels[:w*h*3], nil
}
