package importer

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"hash"

	"github.com/vireo-dev/vireo/apis/cdi/validation"
)

// checksum is an expected digest of the bytes as the source stores them.
type checksum struct {
	algorithm string
	want      string // lower-case hex
	hash      hash.Hash
}

var checksumHashes = map[string]func() hash.Hash{"md5": md5.New, "sha1": sha1.New, "sha256": sha256.New, "sha512": sha512.New}

// parseChecksum returns the checksum s describes (the DataVolume's, which vireo-apiserver has
// validated with the same parser), nil for the empty string.
func parseChecksum(s string) (*checksum, error) {
	if s == "" {
		return nil, nil
	}
	algorithm, digest, err := validation.ParseChecksum(s)
	if err != nil {
		return nil, permanentf("the checksum %q %v", s, err)
	}
	newHash, ok := checksumHashes[algorithm]
	if !ok {
		return nil, permanentf("the checksum %q names an algorithm the importer does not know", s)
	}
	return &checksum{algorithm: algorithm, want: hex.EncodeToString(digest), hash: newHash()}, nil
}

// verify compares the digest of what the hash has seen with the expected one.
func (c *checksum) verify() error {
	got := hex.EncodeToString(c.hash.Sum(nil))
	if got != c.want {
		return permanentf("checksum mismatch: expected %s:%s, computed %s:%s over the bytes received", c.algorithm, c.want, c.algorithm, got)
	}
	return nil
}
