package importer

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"hash"
	"strings"
)

// checksum is an expected digest of the bytes as the source stores them.
type checksum struct {
	algorithm string
	want      string // lower-case hex
	hash      hash.Hash
}

var checksumAlgorithms = map[string]struct {
	newHash func() hash.Hash
	size    int
}{
	"md5":    {md5.New, md5.Size},
	"sha1":   {sha1.New, sha1.Size},
	"sha256": {sha256.New, sha256.Size},
	"sha512": {sha512.New, sha512.Size},
}

// ParseChecksum checks the form of a checksum as CDI writes it, "<algorithm>:<hex digest>"
// with algorithm md5, sha1, sha256 or sha512. The empty string is no checksum.
func ParseChecksum(s string) error {
	_, err := parseChecksum(s)
	return err
}

// parseChecksum returns the checksum s describes, nil for the empty string.
func parseChecksum(s string) (*checksum, error) {
	if s == "" {
		return nil, nil
	}
	algorithm, digest, ok := strings.Cut(s, ":")
	algorithm = strings.ToLower(algorithm)
	alg, known := checksumAlgorithms[algorithm]
	if !ok || !known {
		return nil, permanentf("the checksum %q is not of the form <algorithm>:<hex digest> with algorithm md5, sha1, sha256 or sha512", s)
	}
	raw, err := hex.DecodeString(digest)
	if err != nil || len(raw) != alg.size {
		return nil, permanentf("the checksum %q is not a %s digest: want %d hexadecimal digits", s, algorithm, 2*alg.size)
	}
	return &checksum{algorithm: algorithm, want: hex.EncodeToString(raw), hash: alg.newHash()}, nil
}

// verify compares the digest of what the hash has seen with the expected one.
func (c *checksum) verify() error {
	got := hex.EncodeToString(c.hash.Sum(nil))
	if got != c.want {
		return permanentf("checksum mismatch: expected %s:%s, computed %s:%s over the bytes received", c.algorithm, c.want, c.algorithm, got)
	}
	return nil
}
