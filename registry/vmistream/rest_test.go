package vmistream

import (
	"net/http"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "github.com/vireo-dev/vireo/apis/core/v1"
)

func TestStreamable(t *testing.T) {
	for _, c := range []struct {
		phase v1.VirtualMachineInstancePhase
		code  int32
	}{
		{v1.Running, 0}, {"", http.StatusBadRequest}, {v1.Pending, http.StatusBadRequest}, {v1.Scheduling, http.StatusBadRequest},
		{v1.Scheduled, http.StatusBadRequest}, {v1.Succeeded, http.StatusConflict}, {v1.Failed, http.StatusConflict},
	} {
		vmi := &v1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "vm"}, Status: v1.VirtualMachineInstanceStatus{Phase: c.phase}}
		err := Streamable(vmi, Console)
		var code int32
		if err != nil {
			code = err.(apierrors.APIStatus).Status().Code
		}
		if code != c.code {
			t.Errorf("phase %q: %v (code %d), want code %d", c.phase, err, code, c.code)
		}
	}
}

func TestCheckUpgrade(t *testing.T) {
	req := func(headers ...string) *http.Request {
		r, _ := http.NewRequest(http.MethodGet, "https://x/console", nil)
		for i := 0; i+1 < len(headers); i += 2 {
			r.Header.Add(headers[i], headers[i+1])
		}
		return r
	}
	upgrade := []string{"Connection", "Upgrade", "Upgrade", "websocket"}
	for _, c := range []struct {
		name    string
		r       *http.Request
		wantErr string
	}{
		{"plain GET", req(), "streams over a websocket"},
		{"SPDY upgrade", req("Connection", "Upgrade", "Upgrade", "SPDY/3.1", "Sec-Websocket-Protocol", Subprotocol), "streams over a websocket"},
		{"no subprotocol", req(upgrade...), Subprotocol},
		{"wrong subprotocol", req(append(upgrade, "Sec-Websocket-Protocol", "v4.channel.k8s.io")...), Subprotocol},
		{"subprotocol among others", req(append(upgrade, "Sec-Websocket-Protocol", "base64url.bearer.authorization.k8s.io.x, plain.kubevirt.io")...), ""},
	} {
		err := CheckUpgrade(c.r, Console)
		switch {
		case c.wantErr == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr) || !apierrors.IsBadRequest(err)):
			t.Errorf("%s: %v, want a bad request saying %q", c.name, err, c.wantErr)
		}
	}
}
