package e2e

import (
	"bytes"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/test/images"
)

// TestContainerDiskLayersAreVerified: containerDisks are pulled and checked by the container
// runtime, and its cache is shared safely between tenants.
//   - A registry that serves a containerDisk's manifest with a tampered layer gets its VMI
//     nothing: containerd refuses the layer (its digest does not match the manifest's), and the
//     VMI's Synchronized condition names the image and says why.
//   - Nothing of the tampered layer stays on the node: another tenant naming the same digest in
//     an honest registry boots the true disk (a block only that disk has reads right).
//   - Two tenants running the same digest on the same node at once share the runtime's copy
//     read-only: what one guest writes to its disk the other does not read; the VMIs' volumeStatus
//     both name that digest.
func TestContainerDiskLayersAreVerified(t *testing.T) {
	t.Parallel()
	attacker, victim, neighbour := namespace(t), namespace(t), namespace(t)
	node := cluster.NodeNames()[0]

	// A disk no node has yet (a layer digest of its own): tiny's, with one block marked.
	tiny, err := name.ParseReference(cluster.ContainerDiskImage("tiny"), name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	base, err := remote.Image(tiny)
	if err != nil {
		t.Fatalf("reading %s: %v", tiny, err)
	}
	disk := filepath.Join(t.TempDir(), "disk.qcow2")
	if err := extractContainerDisk(base, disk); err != nil {
		t.Fatal(err)
	}
	block := lastBlock(t, disk)
	if out, err := exec.Command("qemu-io", "-f", "qcow2", "-c", fmt.Sprintf("write -P 0x5a %d %d", block*movedBlockSize, movedBlockSize), disk).CombinedOutput(); err != nil {
		t.Fatalf("qemu-io: %v\n%s", err, out)
	}
	img, err := images.ContainerDiskImage(disk, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	digest, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("the containerDisk has %d layers (%v)", len(layers), err)
	}
	layer, err := layers[0].Digest()
	if err != nil {
		t.Fatal(err)
	}

	evil := serveTamperingRegistry(t, "/blobs/"+layer.String())
	evilRepo := evil + "/vireo/e2e-tampered"
	honestRepo := cluster.RegistryAddress() + "/vireo/e2e-verified-" + victim
	for _, repo := range []string{evilRepo, honestRepo} {
		ref, err := name.ParseReference(repo+":latest", name.Insecure)
		if err != nil {
			t.Fatal(err)
		}
		if err := remote.Write(ref, img); err != nil {
			t.Fatalf("pushing %s: %v", ref, err)
		}
	}

	tampered := evilRepo + "@" + digest.String()
	kubectl(t, "-n", attacker, "apply", "-f", manifestFile(t, secretVMI("tampered", node, tampered, "", "")))
	// containerd's own refusal, naming the layer whose bytes did not match (not, say, a
	// registry it could not reach).
	waitSynchronizedFalse(t, attacker, "tampered", tampered, "unexpected commit digest", "expected "+layer.String())
	if vmi, err := vireo.KubevirtV1().VirtualMachineInstances(attacker).Get(t.Context(), "tampered", metav1.GetOptions{}); err == nil {
		if c := conditionOf(vmi, v1.VirtualMachineInstanceSynchronized); c != nil {
			t.Logf("the tampered image's VMI says: %s: %s", c.Reason, c.Message)
		}
	}

	honest := honestRepo + "@" + digest.String()
	kubectl(t, "-n", victim, "apply", "-f", manifestFile(t, secretVMI("honest", node, honest, "", "")))
	kubectl(t, "-n", neighbour, "apply", "-f", manifestFile(t, secretVMI("honest", node, honest, "", "")))
	mine, theirs := openConsole(t, victim, "honest"), openConsole(t, neighbour, "honest")
	mine.waitFor(t, guestMarker, 120*time.Second)
	theirs.waitFor(t, guestMarker, 120*time.Second)
	marked := md5.Sum(bytes.Repeat([]byte{0x5a}, movedBlockSize))
	if got := readGuestBlock(t, mine, "TRUE", block); got != hex.EncodeToString(marked[:]) {
		t.Fatalf("the honest image's block %d reads %s in the guest, want the marked block's %x: the node kept something of the tampered layer", block, got, marked)
	}

	// The victim's guest writes the block; the neighbour's, on the same digest, still reads the image's.
	mine.send(t, fmt.Sprintf("dd if=/dev/zero of=/dev/vda bs=%d seek=%d count=1 conv=fsync 2>/dev/null; echo WROTE-$?", movedBlockSize, block))
	mine.waitFor(t, "WROTE-0", 30*time.Second)
	zero := md5.Sum(make([]byte, movedBlockSize))
	if got := readGuestBlock(t, mine, "MINE", block); got != hex.EncodeToString(zero[:]) {
		t.Errorf("the victim's guest reads %s after writing zeros, want %x", got, zero)
	}
	if got := readGuestBlock(t, theirs, "THEIRS", block); got != hex.EncodeToString(marked[:]) {
		t.Errorf("the neighbour's guest reads %s at block %d after the victim wrote it, want the image's %x", got, block, marked)
	}
	for _, ns := range []string{victim, neighbour} {
		vs := waitPhase(t, ns, "honest", v1.Running, 30*time.Second).Status.VolumeStatus
		if len(vs) != 1 || vs[0].ContainerDiskVolume == nil || vs[0].ContainerDiskVolume.ImageID != honest {
			t.Errorf("%s/honest volumeStatus %+v, want containerdisk at %s", ns, vs, honest)
		}
	}
	for _, ns := range []string{attacker, victim, neighbour} {
		kubectl(t, "-n", ns, "delete", "vmi", "--all", "--wait=false")
	}
}

// serveTamperingRegistry serves an in-memory registry on the bridge (where the local nodes
// reach it, over plain HTTP, which their containerd is told to allow) that answers a GET of a
// blob path ending in tamperedSuffix with one byte of the blob changed. It returns host:port.
func serveTamperingRegistry(t *testing.T, tamperedSuffix string) string {
	t.Helper()
	honest := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	ln, err := net.Listen("tcp", net.JoinHostPort(cluster.Options().Network.HostIP.String(), "0"))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || !strings.HasSuffix(r.URL.Path, tamperedSuffix) {
			honest.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		honest.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		if rec.Code == http.StatusOK && len(body) > 0 {
			body[len(body)/2] ^= 0xff
		}
		for k, vs := range rec.Header() {
			w.Header()[k] = vs
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(body)
	}))
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	addr := ln.Addr().String()
	if err := cluster.AllowPlainHTTPRegistry(addr); err != nil {
		t.Fatal(err)
	}
	return addr
}
