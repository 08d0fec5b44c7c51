package apiclient

import (
	"testing"

	"k8s.io/client-go/rest"
)

func TestPreferProtobufLeavesTheOriginalAlone(t *testing.T) {
	cfg := &rest.Config{Host: "https://example.invalid", UserAgent: "test"}
	got := PreferProtobuf(cfg)
	if got.ContentType != "application/json" || got.AcceptContentTypes != "application/vnd.kubernetes.protobuf,application/json" {
		t.Errorf("content type %q, accept %q; want JSON bodies and protobuf answers", got.ContentType, got.AcceptContentTypes)
	}
	if got.Host != cfg.Host || got.UserAgent != cfg.UserAgent {
		t.Errorf("the copy lost the config's fields: %+v", got)
	}
	if cfg.ContentType != "" || cfg.AcceptContentTypes != "" {
		t.Errorf("the original changed: %q, %q", cfg.ContentType, cfg.AcceptContentTypes)
	}
}
