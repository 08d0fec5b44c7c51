package podnet

import (
	"encoding/json"
	"fmt"
)

// cniVersion is the CNI spec version of the configuration; Debian's plugins 1.1.1 support it.
const cniVersion = "1.0.0"

// confList is the node's CNI network: a bridge in the node's namespace that is the Pods'
// gateway (no masquerading: Pod addresses are routed as they are), host-local addresses from
// the Pod CIDR kept in dataDir, and the Pod's loopback.
func confList(bridge, subnet, dataDir string) ([]byte, error) {
	conf := map[string]any{
		"cniVersion": cniVersion,
		"name":       networkName,
		"plugins": []any{
			map[string]any{
				"type":        "bridge",
				"bridge":      bridge,
				"isGateway":   true,
				"ipMasq":      false,
				"hairpinMode": true,
				"ipam": map[string]any{
					"type":    "host-local",
					"ranges":  [][]map[string]string{{{"subnet": subnet}}},
					"routes":  []map[string]string{{"dst": "0.0.0.0/0"}},
					"dataDir": dataDir,
				},
			},
			map[string]any{"type": "loopback"},
		},
	}
	b, err := json.Marshal(conf)
	if err != nil {
		return nil, fmt.Errorf("encoding the CNI configuration: %w", err)
	}
	return b, nil
}
