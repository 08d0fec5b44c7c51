package disks

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
	"github.com/vireo-dev/vireo/launcher/domain"
)

// NoCloud file names and volume label, as cloud-init's NoCloud data source looks for them.
const (
	noCloudLabel       = "cidata"
	noCloudUserData    = "user-data"
	noCloudMetaData    = "meta-data"
	noCloudNetworkData = "network-config"
)

// plainYAMLScalar is what a meta-data value may look like to be written unquoted.
var plainYAMLScalar = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// NoCloud is the content of a NoCloud "cidata" ISO.
type NoCloud struct {
	// UserData is the user-data file; cloud-init needs the file even when it is empty.
	UserData []byte
	// NetworkConfig is the network-config file (netplan v1 or v2); left out when empty.
	NetworkConfig []byte
	// InstanceID is meta-data's instance-id; cloud-init runs its once-per-instance steps again
	// when it changes.
	InstanceID string
	// LocalHostname is meta-data's local-hostname.
	LocalHostname string
}

// ResolvedSecrets are the cloud-init data a volume refers to in Secrets, which the launcher
// reads from where its Pod mounts them: the launcher holds no Kubernetes credentials.
type ResolvedSecrets struct {
	// UserData is the user-data from cloudInitNoCloud.secretRef.
	UserData []byte
	// NetworkData is the network data from cloudInitNoCloud.networkDataSecretRef.
	NetworkData []byte
}

// NoCloudFromVolume returns the NoCloud content of a cloudInitNoCloud volume of vmi: the
// user-data from userData, userDataBase64 or (resolved) secretRef, the network data, and
// KubeVirt's meta-data: instance-id "<name>.<namespace>", which stays the same across the
// restarts of a VirtualMachine so cloud-init's first-boot steps run once, and local-hostname
// spec.hostname or else the VMI's name.
func NoCloudFromVolume(vmi *v1.VirtualMachineInstance, volume string, src *v1.CloudInitNoCloudSource, secrets ResolvedSecrets) (NoCloud, error) {
	out := NoCloud{InstanceID: vmi.Name + "." + vmi.Namespace, LocalHostname: vmi.Spec.Hostname}
	if out.LocalHostname == "" {
		out.LocalHostname = vmi.Name
	}
	if src == nil {
		return out, fmt.Errorf("volume %q is not a cloudInitNoCloud volume", volume)
	}
	sources := 0
	if src.UserData != "" {
		sources++
		out.UserData = []byte(src.UserData)
	}
	if src.UserDataBase64 != "" {
		sources++
		data, err := base64.StdEncoding.DecodeString(src.UserDataBase64)
		if err != nil {
			return out, fmt.Errorf("volume %q: cloudInitNoCloud.userDataBase64 is not valid base64: %w", volume, err)
		}
		out.UserData = data
	}
	if src.UserDataSecretRef != nil {
		sources++
		if secrets.UserData == nil {
			return out, fmt.Errorf("volume %q: the user-data of Secret %q (cloudInitNoCloud.secretRef) was not passed to the launcher",
				volume, src.UserDataSecretRef.Name)
		}
		out.UserData = secrets.UserData
	}
	if sources > 1 {
		return out, fmt.Errorf("volume %q: set only one of cloudInitNoCloud.userData, userDataBase64 and secretRef", volume)
	}
	out.NetworkConfig = []byte(src.NetworkData)
	if src.NetworkDataSecretRef != nil && secrets.NetworkData == nil {
		return out, fmt.Errorf("volume %q: the network data of Secret %q (cloudInitNoCloud.networkDataSecretRef) was not passed to the launcher",
			volume, src.NetworkDataSecretRef.Name)
	}
	if len(secrets.NetworkData) > 0 {
		if src.NetworkData != "" {
			return out, fmt.Errorf("volume %q: network data given both inline and in a Secret; set only one", volume)
		}
		out.NetworkConfig = secrets.NetworkData
	}
	return out, nil
}

// metaData renders the meta-data file as YAML.
func (n NoCloud) metaData() []byte {
	scalar := func(s string) string {
		if plainYAMLScalar.MatchString(s) {
			return s
		}
		quoted, _ := json.Marshal(s) // a JSON string is a YAML double-quoted scalar
		return string(quoted)
	}
	return []byte("instance-id: " + scalar(n.InstanceID) + "\nlocal-hostname: " + scalar(n.LocalHostname) + "\n")
}

// CloudInitNoCloud writes the NoCloud ISO of volume: an ISO 9660 image labelled "cidata" with
// user-data, meta-data and, when given, network-config, with Joliet and Rock Ridge names (made
// by genisoimage, as KubeVirt does: files owned by root, readable, lowercase names for every
// reader). The data is staged in a private directory below the per-VMI directory, which is
// removed afterwards, since user-data may hold secrets. Calling it again rewrites the ISO.
func (p *Preparer) CloudInitNoCloud(ctx context.Context, volume string, data NoCloud) (domain.DiskSource, error) {
	if err := checkVolumeName(volume); err != nil {
		return domain.DiskSource{}, err
	}
	if data.InstanceID == "" {
		return domain.DiskSource{}, fmt.Errorf("cloudInitNoCloud volume %q: no instance-id", volume)
	}
	dir, err := p.subdir(cloudInitDir)
	if err != nil {
		return domain.DiskSource{}, err
	}
	defer dir.Close()
	staging, err := os.MkdirTemp(dir.path, volume+".staging-")
	if err != nil {
		return domain.DiskSource{}, err
	}
	defer os.RemoveAll(staging)
	stage, err := openDir(staging)
	if err != nil {
		return domain.DiskSource{}, err
	}
	defer stage.Close()
	files := map[string][]byte{noCloudUserData: data.UserData, noCloudMetaData: data.metaData()}
	if len(data.NetworkConfig) > 0 {
		files[noCloudNetworkData] = data.NetworkConfig
	}
	for name, content := range files {
		if err := stage.writeFile(name, content); err != nil {
			return domain.DiskSource{}, err
		}
	}
	iso := volume + ".iso"
	tmp := iso + ".tmp"
	dir.remove(tmp)
	f, err := dir.createExclusive(tmp)
	if err != nil {
		return domain.DiskSource{}, err
	}
	defer f.Close()
	_, err = run(ctx, f, p.genISOImage(), "-quiet", "-output", childFD, "-volid", noCloudLabel,
		"-joliet", "-rational-rock", "-input-charset", "utf-8", staging)
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		err = dir.rename(tmp, iso)
	}
	if err != nil {
		dir.remove(tmp)
		return domain.DiskSource{}, fmt.Errorf("cloudInitNoCloud volume %q: %w", volume, err)
	}
	return fileSource(filepath.Join(dir.path, iso), domain.FormatRaw, false), nil
}
