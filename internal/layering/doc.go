// Package layering holds the test that keeps the binaries' packages apart: a binary (cmd/X)
// links its own packages, the shared tier (apis, generated, internal, version, kvm) and the
// contract packages two binaries speak through (importer/uploadapi and importerapi, the upload
// client, launcher/protocol), and never another binary's packages.
package layering
