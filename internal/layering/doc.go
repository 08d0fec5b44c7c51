// Package layering holds the tests that keep the house in order. A binary (cmd/X)
// links its own packages, the shared tier (apis, generated, internal, version, kvm) and the
// contract packages two binaries speak through (importer/uploadapi and importerapi, the upload
// client, launcher/protocol), and never another binary's packages; and every package says what
// it is in a doc comment.
package layering
