package imagebuild

// Image is one OCI image the project builds.
type Image struct {
	// Name is the repository's last component, e.g. vireo-launcher.
	Name string `json:"name"`
	// Command is the Go main package whose binary is the entrypoint, relative to Module
	// (./cmd/vireo-launcher); it is installed as Binary.
	Command string `json:"command"`
	// Module is the directory, relative to the repository, of the Go module Command is built
	// in: the repository's own when empty, hack/tools for the upstream commands it pins.
	Module string `json:"module,omitempty"`
	// VersionOf names the module (in Module's requirements) whose version is the image's
	// org.opencontainers.image.version; Vireo's version when empty.
	VersionOf string `json:"versionOf,omitempty"`
	// Binary is where the binary goes in the image; /usr/bin/<Name> when empty.
	Binary string `json:"binary,omitempty"`
	// Packages are the Debian packages unpacked into the image, with what they depend on.
	Packages []string `json:"packages,omitempty"`
	// User is the user (uid:gid) the image runs as; never root.
	User string `json:"user"`
	// Description is the image's org.opencontainers.image.description.
	Description string `json:"description"`
}

// Users and groups every image's /etc/passwd and /etc/group have: root (a Pod that must run as
// root says so itself, as the node agent's does), nonroot (65532, the Go components), qemu
// (107, the launcher's and importer's fixed identity, KubeVirt's too, owner of the per-VMI
// directories; libvirtd refuses to start QEMU as a uid without a passwd entry).
const (
	nonRootUser = "65532:65532"
	qemuUser    = "107:107"
	passwd      = "root:x:0:0:root:/root:/usr/sbin/nologin\n" +
		"qemu:x:107:107:QEMU and libvirt (session mode):/var/run/vireo:/usr/sbin/nologin\n" +
		"nonroot:x:65532:65532:nonroot:/home/nonroot:/usr/sbin/nologin\n"
	group = "root:x:0:\nqemu:x:107:\nnonroot:x:65532:\n"
)

// launcherPackages: libvirt-daemon is the daemon with its QEMU driver (libvirt-daemon-system
// would add only system-mode services, polkit and dnsmasq, which a session daemon never uses);
// qemu-system-x86 brings seabios (the BIOS) and ipxe-qemu (the NICs' option ROMs); ovmf is the
// EFI firmware; qemu-utils (qemu-img) makes containerDisk overlays and emptyDisks; genisoimage
// makes cloud-init ISOs; passt gives a guest the Pod's network from user space.
var launcherPackages = []string{"libvirt-daemon", "libvirt-daemon-driver-qemu", "qemu-system-x86",
	"qemu-utils", "ovmf", "genisoimage", "passt"}

// Images are the project's images: Vireo's components and the etcd of artifacts/base's
// vireo-etcd, then what vireo-local and the tests run (the Pod sandbox's pause process and
// agnhost's subset the tests use).
var Images = []Image{
	{Name: "vireo-apiserver", Command: "./cmd/vireo-apiserver", User: nonRootUser,
		Description: "Vireo's aggregated API server (kubevirt.io, cdi.kubevirt.io, subresources.kubevirt.io)"},
	{Name: "vireo-controller", Command: "./cmd/vireo-controller", User: nonRootUser,
		Description: "Vireo's cluster-wide reconcilers: launcher Pods, VirtualMachines, migrations, DataVolumes"},
	{Name: "vireo-nodeagent", Command: "./cmd/vireo-nodeagent", User: nonRootUser,
		Description: "Vireo's node agent: drives the launchers of its node's VMIs"},
	{Name: "vireo-launcher", Command: "./cmd/vireo-launcher", User: qemuUser, Packages: launcherPackages,
		Description: "Vireo's per-VMI launcher: a session libvirtd and QEMU"},
	{Name: "vireo-importer", Command: "./cmd/vireo-importer", User: qemuUser, Packages: []string{"qemu-utils"},
		Description: "Vireo's DataVolume importer: fetches, verifies and converts disk images"},
	{Name: "etcd", Module: "hack/tools", Command: "./etcd", Binary: "/usr/local/bin/etcd", VersionOf: "go.etcd.io/etcd/server/v3",
		User: nonRootUser, Description: "etcd's server at the version hack/tools pins: the store of artifacts/base's vireo-etcd"},
	{Name: "pause", Command: "./localcluster/pause", User: "65535:65535",
		Description: "The Pod sandbox's process on vireo-local's nodes: sleeps until signalled, reaps orphans"},
	{Name: "agnhost", Command: "./test/agnhost", Binary: "/agnhost", User: nonRootUser, Packages: []string{"busybox-static"},
		Description: "The part of Kubernetes' e2e test image agnhost that Vireo's tests use (netexec, serve-hostname, connect), with busybox's shell and tools"},
}

// binaryPath is where im's binary goes in the image.
func (im Image) binaryPath() string {
	if im.Binary != "" {
		return im.Binary
	}
	return "/usr/bin/" + im.Name
}

// ImageNamed returns the image called name.
func ImageNamed(name string) (Image, bool) {
	for _, im := range Images {
		if im.Name == name {
			return im, true
		}
	}
	return Image{}, false
}
