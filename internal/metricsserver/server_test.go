package metricsserver

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/server"
)

// A refused reader gets the refusal as a Status, not an encoding error.
func TestRefusalsAreStatuses(t *testing.T) {
	authn := authenticator.RequestFunc(func(req *http.Request) (*authenticator.Response, bool, error) {
		if req.Header.Get("Authorization") == "" {
			return nil, false, nil
		}
		return &authenticator.Response{User: &user.DefaultInfo{Name: "nobody"}}, true, nil
	})
	authz := authorizer.AuthorizerFunc(func(context.Context, authorizer.Attributes) (authorizer.Decision, string, error) {
		return authorizer.DecisionDeny, "not a metrics reader", nil
	})
	h := handler(server.AuthenticationInfo{Authenticator: authn}, server.AuthorizationInfo{Authorizer: authz})
	for name, tc := range map[string]struct {
		token string
		code  int32
	}{"anonymous": {"", http.StatusUnauthorized}, "not allowed": {"Bearer x", http.StatusForbidden}} {
		req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		if tc.token != "" {
			req.Header.Set("Authorization", tc.token)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		var st metav1.Status
		if err := json.Unmarshal(rec.Body.Bytes(), &st); err != nil || st.Kind != "Status" || st.Code != tc.code || int32(rec.Code) != tc.code {
			t.Errorf("%s: HTTP %d, body %q (%v); want %d with a Status", name, rec.Code, rec.Body.String(), err, tc.code)
		}
	}
}
