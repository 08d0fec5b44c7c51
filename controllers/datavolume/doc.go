// Package datavolume is vireo-controller's DataVolume reconciler: for each DataVolume it creates
// the PersistentVolumeClaim (owned by the DataVolume, as CDI does) and one importer Pod that fills
// it, follows the import through CDI's phases with progress, restarts and conditions, and removes
// the importer Pod once the import has ended. Rendering the claim and the Pod and computing the
// status are pure functions; the controller only reads and writes objects.
package datavolume
