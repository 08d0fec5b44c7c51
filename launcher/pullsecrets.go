package launcher

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/vireo-dev/vireo/launcher/disks"
	"github.com/vireo-dev/vireo/launcher/protocol"
)

// PullSecrets reads the .dockerconfigjson of the image pull secret the launcher's Pod mounts for
// each named containerDisk volume. The launcher only reads files its Pod was given; it holds no
// Kubernetes credentials and never pulls.
func (l *launcher) PullSecrets(_ context.Context, req *protocol.PullSecretsRequest) (*protocol.PullSecretsResponse, error) {
	out := &protocol.PullSecretsResponse{DockerConfigJSON: map[string][]byte{}}
	for _, vol := range req.Volumes {
		if msgs := validation.IsDNS1123Label(vol); len(msgs) > 0 {
			return nil, fmt.Errorf("volume name %q cannot name a mount: %s", vol, strings.Join(msgs, "; "))
		}
		data, _, err := disks.ReadMountedSecret(protocol.SecretMountDir(vol, protocol.PullSecret), protocol.DockerConfigJSONKey)
		if err != nil {
			return nil, fmt.Errorf("the image pull secret of volume %q: %w", vol, err)
		}
		out.DockerConfigJSON[vol] = data
	}
	return out, nil
}
