package disks

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

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

// Config drive file names and volume label, as cloud-init's and cloudbase-init's ConfigDrive
// data sources look for them (OpenStack's layout, KubeVirt's choice of files).
const (
	configDriveLabel       = "config-2"
	configDriveDir         = "openstack/latest/"
	configDriveUserData    = configDriveDir + "user_data"
	configDriveMetaData    = configDriveDir + "meta_data.json"
	configDriveNetworkData = configDriveDir + "network_data.json"
)

// plainYAMLScalar is what a meta-data value may look like to be written unquoted.
var plainYAMLScalar = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// NoCloud is the content of a cloud-init ISO, NoCloud's "cidata" or a "config-2" config drive.
type NoCloud struct {
	// UserData is the user-data file; cloud-init needs the file even when it is empty.
	UserData []byte
	// NetworkConfig is the network configuration (NoCloud's network-config, netplan v1 or v2, or
	// a config drive's network_data.json); left out when empty.
	NetworkConfig []byte
	// InstanceID is meta-data's instance-id; cloud-init runs its once-per-instance steps again
	// when it changes.
	InstanceID string
	// LocalHostname is meta-data's local-hostname.
	LocalHostname string
	// UUID is the guest's firmware UUID, a config drive's meta_data.json uuid.
	UUID string
	// PublicKeys are SSH public keys for the guest's default user (KubeVirt's noCloud and
	// configDrive propagation of accessCredentials): meta-data's public-keys, meta_data.json's
	// public_keys.
	PublicKeys []string
}

// ResolvedSecrets are the cloud-init data a volume refers to in Secrets, which the launcher
// reads from where its Pod mounts them: the launcher holds no Kubernetes credentials.
type ResolvedSecrets struct {
	// UserData is the user-data from the volume's secretRef.
	UserData []byte
	// NetworkData is the network data from the volume's networkDataSecretRef.
	NetworkData []byte
}

// NoCloudFromVolume returns the content of vol, a cloudInitNoCloud or cloudInitConfigDrive
// volume of vmi: the user-data from userData, userDataBase64 or (resolved) secretRef, the
// network data from networkData, networkDataBase64 or (resolved) networkDataSecretRef, and
// KubeVirt's meta-data: instance-id "<name>.<namespace>", which stays the same across the
// restarts of a VirtualMachine so cloud-init's first-boot steps run once, local-hostname
// spec.hostname or else the VMI's name, and the guest's firmware UUID.
func NoCloudFromVolume(vmi *v1.VirtualMachineInstance, vol *v1.Volume, secrets ResolvedSecrets) (NoCloud, error) {
	out := NoCloud{InstanceID: vmi.Name + "." + vmi.Namespace, LocalHostname: vmi.Spec.Hostname}
	if out.LocalHostname == "" {
		out.LocalHostname = vmi.Name
	}
	src, kind := vol.CloudInit()
	if src == nil {
		return out, fmt.Errorf("volume %q is not a cloud-init volume", vol.Name)
	}
	var err error
	if out.UUID, err = domain.FirmwareUUID(vmi); err != nil {
		return out, err
	}
	user := cloudInitSource{what: "user-data", fields: [3]string{"userData", "userDataBase64", "secretRef"},
		inline: src.UserData, base64: src.UserDataBase64, ref: src.UserDataSecretRef, resolved: secrets.UserData}
	if out.UserData, err = user.data(vol.Name, kind); err != nil {
		return out, err
	}
	network := cloudInitSource{what: "network data", fields: [3]string{"networkData", "networkDataBase64", "networkDataSecretRef"},
		inline: src.NetworkData, base64: src.NetworkDataBase64, ref: src.NetworkDataSecretRef, resolved: secrets.NetworkData}
	out.NetworkConfig, err = network.data(vol.Name, kind)
	return out, err
}

// cloudInitSource is one kind of a cloud-init volume's data (user-data or network data): its
// inline, base64 and Secret forms, the Secret's data as the launcher read it, and the names of
// the three fields, for messages.
type cloudInitSource struct {
	what, inline, base64 string
	fields               [3]string
	ref                  *v1.LocalObjectReference
	resolved             []byte
}

// data is the one form given (nil for none); more than one, undecodable base64 or a Secret the
// launcher was not given is an error naming the volume and the field (kind is the volume
// source's field name).
func (c cloudInitSource) data(volume, kind string) ([]byte, error) {
	var data []byte
	sources := 0
	if c.inline != "" {
		sources++
		data = []byte(c.inline)
	}
	if c.base64 != "" {
		sources++
		decoded, err := base64.StdEncoding.DecodeString(c.base64)
		if err != nil {
			return nil, fmt.Errorf("volume %q: %s.%s is not valid base64: %w", volume, kind, c.fields[1], err)
		}
		data = decoded
	}
	switch {
	case c.ref != nil && c.resolved == nil:
		return nil, fmt.Errorf("volume %q: the %s of Secret %q (%s.%s) was not passed to the launcher", volume, c.what, c.ref.Name, kind, c.fields[2])
	case c.ref != nil || len(c.resolved) > 0:
		sources++
		data = c.resolved
	}
	if sources > 1 {
		return nil, fmt.Errorf("volume %q: %s given more than once; set only one of %s.%s, %s and %s", volume, c.what, kind, c.fields[0], c.fields[1], c.fields[2])
	}
	return data, nil
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
	out := "instance-id: " + scalar(n.InstanceID) + "\nlocal-hostname: " + scalar(n.LocalHostname) + "\n"
	if len(n.PublicKeys) > 0 {
		out += "public-keys:\n"
		for i, k := range n.PublicKeys {
			out += fmt.Sprintf("  \"%d\": %s\n", i, scalar(k))
		}
	}
	return []byte(out)
}

// publicKeysByIndex is KubeVirt's form of public keys in metadata: a map from "0", "1", ...
func (n NoCloud) publicKeysByIndex() map[string]string {
	if len(n.PublicKeys) == 0 {
		return nil
	}
	out := make(map[string]string, len(n.PublicKeys))
	for i, k := range n.PublicKeys {
		out[strconv.Itoa(i)] = k
	}
	return out
}

// CloudInitNoCloud writes the NoCloud ISO of volume: an ISO 9660 image labelled "cidata" with
// user-data, meta-data and, when given, network-config (writeISO).
func (p *Preparer) CloudInitNoCloud(ctx context.Context, volume string, data NoCloud) (domain.DiskSource, error) {
	if data.InstanceID == "" {
		return domain.DiskSource{}, fmt.Errorf("cloudInitNoCloud volume %q: no instance-id", volume)
	}
	files := map[string][]byte{noCloudUserData: data.UserData, noCloudMetaData: data.metaData()}
	if len(data.NetworkConfig) > 0 {
		files[noCloudNetworkData] = data.NetworkConfig
	}
	return p.writeISO(ctx, volume, noCloudLabel, files)
}

// configDriveMeta is a config drive's meta_data.json, with KubeVirt's fields.
type configDriveMeta struct {
	InstanceID string            `json:"instance_id"`
	Hostname   string            `json:"hostname"`
	UUID       string            `json:"uuid,omitempty"`
	PublicKeys map[string]string `json:"public_keys,omitempty"`
}

// CloudInitConfigDrive writes the config drive of volume: an ISO 9660 image labelled
// "config-2" with openstack/latest/user_data, meta_data.json and, when given,
// network_data.json (writeISO).
func (p *Preparer) CloudInitConfigDrive(ctx context.Context, volume string, data NoCloud) (domain.DiskSource, error) {
	if data.InstanceID == "" {
		return domain.DiskSource{}, fmt.Errorf("cloudInitConfigDrive volume %q: no instance-id", volume)
	}
	meta, err := json.Marshal(configDriveMeta{InstanceID: data.InstanceID, Hostname: data.LocalHostname, UUID: data.UUID,
		PublicKeys: data.publicKeysByIndex()})
	if err != nil {
		return domain.DiskSource{}, err
	}
	files := map[string][]byte{configDriveUserData: data.UserData, configDriveMetaData: meta}
	if len(data.NetworkConfig) > 0 {
		files[configDriveNetworkData] = data.NetworkConfig
	}
	return p.writeISO(ctx, volume, configDriveLabel, files)
}

// writeISO writes volume's ISO 9660 image labelled label with files (paths below the image's
// root, fixed by the caller), with Joliet and Rock Ridge names (made by genisoimage, as KubeVirt
// does: files owned by root, readable, lowercase names for every reader). The data is staged in
// a private directory below the per-VMI directory, which is removed afterwards, since user-data
// may hold secrets. Calling it again rewrites the ISO.
func (p *Preparer) writeISO(ctx context.Context, volume, label string, files map[string][]byte) (domain.DiskSource, error) {
	if err := checkVolumeName(volume); err != nil {
		return domain.DiskSource{}, err
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
	if err := stageFiles(staging, files); err != nil {
		return domain.DiskSource{}, err
	}
	iso := volume + ".iso"
	tmp := iso + ".tmp"
	dir.remove(tmp)
	f, err := dir.createExclusive(tmp)
	if err != nil {
		return domain.DiskSource{}, err
	}
	defer f.Close()
	_, err = run(ctx, f, p.genISOImage(), "-quiet", "-output", childFD, "-volid", label,
		"-joliet", "-rational-rock", "-input-charset", "utf-8", staging)
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		err = dir.rename(tmp, iso)
	}
	if err != nil {
		dir.remove(tmp)
		return domain.DiskSource{}, fmt.Errorf("volume %q: making its ISO: %w", volume, err)
	}
	return fileSource(filepath.Join(dir.path, iso), domain.FormatRaw, false), nil
}

// stageFiles writes files below the fresh directory staging, creating their directories.
func stageFiles(staging string, files map[string][]byte) error {
	for name, content := range files {
		stage, err := openDir(staging)
		if err != nil {
			return err
		}
		parts := strings.Split(name, "/")
		for _, sub := range parts[:len(parts)-1] {
			next, err := stage.subdir(sub)
			stage.Close()
			if err != nil {
				return err
			}
			stage = next
		}
		err = stage.writeFile(parts[len(parts)-1], content)
		stage.Close()
		if err != nil {
			return err
		}
	}
	return nil
}
