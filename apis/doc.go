// Package apis holds Vireo's API groups (core: kubevirt.io, cdi: cdi.kubevirt.io); its own tests
// round-trip every kind of every group through the scheme.
package apis
