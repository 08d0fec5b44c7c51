// Package defaults fills in the fields of kubevirt.io objects that users may leave out, with
// KubeVirt's default values, so that stored objects are complete and the controllers and node
// agents never have to guess. The functions are pure and operate on the kubevirt.io/v1 types;
// the registry strategies call them before validation. The KubeVirt settings object is the
// exception: it is stored as written, and KubeVirtSettingsOf returns its effective settings.
package defaults
