package agentclient

import (
	"fmt"
	"net/http"
	"net/url"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/proxy"
	"k8s.io/apiserver/pkg/registry/rest"
)

// Proxy is the relay of a subresource to path (with query) on the node agent of node: an
// upgrade-aware reverse proxy over the client's mutual TLS, to the agent's own address (not the
// request's Host), that reports a failure to connect through errs. A node without a ready agent
// is an error here, before anything is relayed.
func (c *Client) Proxy(node, path string, query url.Values, upgrade bool, errs proxy.ErrorResponder) (*proxy.UpgradeAwareHandler, error) {
	loc, err := c.Location(node, path, query)
	if err != nil {
		return nil, err
	}
	p := proxy.NewUpgradeAwareHandler(loc, c.Transport(), false, upgrade, errs)
	p.UseLocationHost = true
	return p, nil
}

// ResponderErrors answers a failure to reach the node agent through r, as 503 Service
// Unavailable in the API's Status form.
func ResponderErrors(r rest.Responder) proxy.ErrorResponder { return responderErrors{r} }

type responderErrors struct{ r rest.Responder }

func (e responderErrors) Error(_ http.ResponseWriter, _ *http.Request, err error) {
	e.r.Error(apierrors.NewServiceUnavailable(fmt.Sprintf("connecting to the node agent: %v", err)))
}

// PlainErrors answers a failure to reach the node agent as a plain-text 503 (for responses
// that are not API objects, such as a screenshot's PNG).
var PlainErrors proxy.ErrorResponder = plainErrors{}

type plainErrors struct{}

func (plainErrors) Error(w http.ResponseWriter, _ *http.Request, err error) {
	http.Error(w, fmt.Sprintf("connecting to the node agent: %v", err), http.StatusServiceUnavailable)
}
