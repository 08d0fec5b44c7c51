// Package framework starts Vireo components for integration tests and benchmarks and
// waits on them with deadlines.
package framework

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"

	"github.com/vireo-dev/vireo/apiserver"
	"github.com/vireo-dev/vireo/generated/clientset/versioned"
)

// APIServer is an in-process vireo-apiserver on an embedded etcd.
type APIServer struct {
	// Config reaches the server as system:apiserver (member of system:masters).
	Config  *rest.Config
	Client  versioned.Interface
	DataDir string
	cancel  context.CancelFunc
	done    chan error
	stop    sync.Once
}

// StartAPIServer starts vireo-apiserver with its data in dataDir on a free loopback
// port and returns once it reports ready. Start it again on the same dataDir to
// test persistence.
func StartAPIServer(ctx context.Context, dataDir string) (*APIServer, error) {
	return StartAPIServerWithOptions(ctx, dataDir, nil)
}

// StartAPIServerWithOptions is StartAPIServer with a hook to adjust the options, such as
// --etcd-servers for an external etcd.
func StartAPIServerWithOptions(ctx context.Context, dataDir string, adjust func(*apiserver.Options)) (*APIServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	opts := apiserver.NewOptions()
	opts.DataDir = dataDir
	if adjust != nil {
		adjust(opts)
	}
	opts.Recommended.SecureServing.Listener = ln
	opts.Recommended.SecureServing.BindPort = ln.Addr().(*net.TCPAddr).Port
	opts.Recommended.SecureServing.BindAddress = net.ParseIP("127.0.0.1")

	runCtx, cancel := context.WithCancel(context.Background())
	inst, err := apiserver.Start(runCtx, opts)
	if err != nil {
		cancel()
		_ = ln.Close()
		return nil, err
	}
	s := &APIServer{Config: inst.LoopbackConfig, DataDir: dataDir, cancel: cancel, done: make(chan error, 1)}
	s.Config.QPS, s.Config.Burst = -1, 0 // no client-side throttling in tests
	go func() { s.done <- inst.Run(runCtx) }()

	if s.Client, err = versioned.NewForConfig(s.Config); err != nil {
		s.Stop()
		return nil, err
	}
	if err := s.waitReady(ctx); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

func (s *APIServer) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	var lastErr error
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		select {
		case err := <-s.done:
			return false, fmt.Errorf("vireo-apiserver exited while starting: %v", err)
		default:
		}
		body, err := s.Client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		if err != nil {
			lastErr = fmt.Errorf("%v: %s", err, body)
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		return errors.Join(fmt.Errorf("vireo-apiserver not ready: %w", err), lastErr)
	}
	return nil
}

// Stop shuts the server and its etcd down and waits until they are gone.
func (s *APIServer) Stop() {
	s.stop.Do(func() {
		s.cancel()
		select {
		case <-s.done:
		case <-time.After(60 * time.Second):
		}
	})
}

// ImpersonatedConfig reaches the server as the named user in system:masters, so a
// request is authorized but is not one of Vireo's own components.
func (s *APIServer) ImpersonatedConfig(user string) *rest.Config {
	c := rest.CopyConfig(s.Config)
	c.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:masters", "system:authenticated"}}
	return c
}
