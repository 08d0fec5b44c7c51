package vireoctl

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	cdiv1beta1 "github.com/vireo-dev/vireo/apis/cdi/v1beta1"
	"github.com/vireo-dev/vireo/generated/clientset/versioned"
	cdiclient "github.com/vireo-dev/vireo/generated/clientset/versioned/typed/cdi/v1beta1"
	"github.com/vireo-dev/vireo/importer/uploadclient"
)

// imageUploadOptions are image-upload's flags and the timings tests shorten.
type imageUploadOptions struct {
	imagePath    string
	size         string
	noCreate     bool
	storageClass string
	accessMode   string
	chunkSize    string
	waitSecs     int
	// poll is the time between two reads of the DataVolume's phase.
	poll time.Duration
	// processing bounds the wait for the DataVolume to succeed once the upload is complete
	// (qemu-img may still be converting the image).
	processing time.Duration
	transfer   uploadclient.Options

	storage resource.Quantity // --size, parsed
}

// newImageUploadCommand is `vireoctl image-upload dv NAME --image-path FILE`: it creates a
// DataVolume with an upload source (or uses one with --no-create), waits for it to be
// UploadReady, sends the file in chunks to its upload subresource through kube-apiserver,
// resuming after lost connections, and waits for the import to succeed.
func newImageUploadCommand(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	return imageUploadCommand(flags, streams, &imageUploadOptions{
		chunkSize: "32Mi", waitSecs: 300, poll: time.Second, processing: 24 * time.Hour, transfer: uploadclient.DefaultOptions(),
	})
}

func imageUploadCommand(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams, o *imageUploadOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "image-upload dv NAME --image-path FILE [--size SIZE]",
		Short: "Upload a local disk image into a DataVolume",
		Long: `Upload a local disk image (raw, qcow2, vmdk, vdi, vhd, vhdx or iso, possibly gzip-, xz- or
zstd-compressed) into a DataVolume through kube-apiserver.

Without --no-create the DataVolume is created with an upload source and --size. The file is sent
in chunks of at most --chunk-size, each sized to take about 10 s at the rate measured; after a lost connection the upload resumes where the importer says it
stopped, and running the command again with --no-create resumes an interrupted upload as long as
the DataVolume's importer is still waiting for it.`,
		Example: `  vireoctl image-upload dv fedora --image-path Fedora.qcow2 --size 10Gi
  vireoctl image-upload dv fedora --image-path Fedora.qcow2 --no-create`,
		Args: imageUploadArgs,
		ValidArgsFunction: func(_ *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
			if len(args) == 0 {
				return []cobra.Completion{"dv"}, cobra.ShellCompDirectiveNoFileComp
			}
			return nil, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(c *cobra.Command, args []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			t, client, err := resolveREST(flags)
			if err != nil {
				return err
			}
			cs, err := versioned.NewForConfig(t.cfg)
			if err != nil {
				return err
			}
			u := &imageUpload{
				o: o, namespace: t.namespace, name: args[1], streams: streams,
				dvs: cs.CdiV1beta1().DataVolumes(t.namespace),
				api: &uploadclient.HTTP{Client: client.Client, URL: client.Get().AbsPath(uploadPath(t.namespace, args[1])).URL().String()},
			}
			if f, ok := streams.ErrOut.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
				u.terminal = true
			}
			return u.run(orBackground(c.Context()))
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.imagePath, "image-path", o.imagePath, "The disk image file to upload.")
	fs.StringVar(&o.size, "size", o.size, "The size of the DataVolume to create, such as 10Gi (required without --no-create).")
	fs.BoolVar(&o.noCreate, "no-create", o.noCreate, "Upload into an existing DataVolume with an upload source instead of creating it (also resumes an interrupted upload).")
	fs.StringVar(&o.storageClass, "storage-class", o.storageClass, "The storage class of the DataVolume to create (default: the cluster's).")
	fs.StringVar(&o.accessMode, "access-mode", o.accessMode, "The access mode of the DataVolume to create: ReadWriteOnce, ReadWriteMany, ReadOnlyMany or ReadWriteOncePod (default: the storage class's).")
	fs.StringVar(&o.chunkSize, "chunk-size", o.chunkSize, "The most bytes sent in one request, such as 8Mi; a lost connection resends at most this much. Chunks are sized to take about 10 s at the rate measured, well under kube-apiserver's 60 s limit.")
	fs.IntVar(&o.waitSecs, "wait-secs", o.waitSecs, "Seconds to wait for the DataVolume to be ready for the upload.")
	return cmd
}

// imageUploadArgs checks `dv NAME`.
func imageUploadArgs(_ *cobra.Command, args []string) error {
	if len(args) != 2 {
		return fmt.Errorf("image-upload takes dv NAME, not %d arguments", len(args))
	}
	switch strings.ToLower(args[0]) {
	case "dv", "datavolume", "datavolumes":
		return nil
	case "pvc", "persistentvolumeclaim", "persistentvolumeclaims":
		return errors.New("uploading into a bare PersistentVolumeClaim is not supported: upload into a DataVolume with image-upload dv NAME")
	}
	return fmt.Errorf("image-upload takes dv NAME; %q is not dv", args[0])
}

// accessModes are the access modes --access-mode accepts.
var accessModes = []cdiv1beta1.PersistentVolumeAccessMode{cdiv1beta1.ReadWriteOnce, cdiv1beta1.ReadWriteMany, cdiv1beta1.ReadOnlyMany, cdiv1beta1.ReadWriteOncePod}

// validate checks the flags before anything is sent.
func (o *imageUploadOptions) validate() error {
	if o.imagePath == "" {
		return errors.New("--image-path is required: the disk image file to upload")
	}
	if o.noCreate && (o.size != "" || o.storageClass != "" || o.accessMode != "") {
		return errors.New("--size, --storage-class and --access-mode describe the DataVolume to create: leave them out with --no-create")
	}
	if !o.noCreate {
		if o.size == "" {
			return errors.New("--size is required to create the DataVolume, such as --size 10Gi (or --no-create to upload into an existing one)")
		}
		q, err := resource.ParseQuantity(o.size)
		if err != nil || q.Sign() <= 0 {
			return fmt.Errorf("--size %q is not a positive quantity such as 10Gi", o.size)
		}
		o.storage = q
	}
	if o.accessMode != "" && !validAccessMode(o.accessMode) {
		return fmt.Errorf("--access-mode %q is not one of %v", o.accessMode, accessModes)
	}
	q, err := resource.ParseQuantity(o.chunkSize)
	if err != nil || q.Sign() <= 0 || q.Value() > 1<<30 {
		return fmt.Errorf("--chunk-size %q is not a quantity between 1 and 1Gi, such as 8Mi", o.chunkSize)
	}
	o.transfer.ChunkSize = q.Value()
	if o.waitSecs <= 0 {
		return fmt.Errorf("--wait-secs %d is not a positive number of seconds", o.waitSecs)
	}
	return nil
}

func validAccessMode(mode string) bool {
	for _, m := range accessModes {
		if string(m) == mode {
			return true
		}
	}
	return false
}

// imageUpload is one run of image-upload.
type imageUpload struct {
	o               *imageUploadOptions
	namespace, name string
	streams         genericiooptions.IOStreams
	terminal        bool // streams.ErrOut is a terminal
	dvs             cdiclient.DataVolumeInterface
	api             uploadclient.API
}

// run uploads the file into the DataVolume.
func (u *imageUpload) run(ctx context.Context) error {
	f, size, err := openImage(u.o.imagePath)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := u.prepare(ctx); err != nil {
		return err
	}
	wait := time.Duration(u.o.waitSecs) * time.Second
	fmt.Fprintf(u.streams.ErrOut, "Waiting up to %s for DataVolume %s/%s to be ready for the upload\n", wait, u.namespace, u.name)
	if _, err := u.waitPhase(ctx, cdiv1beta1.UploadReady, wait); err != nil {
		return err
	}
	p := newUploadProgress(u.streams.ErrOut, u.terminal, size)
	start := time.Now()
	err = uploadclient.Transfer(ctx, u.api, f, size, u.o.transfer, p.update)
	p.finish()
	if err != nil && !errors.Is(err, uploadclient.ErrFailed) && ctx.Err() == nil {
		return fmt.Errorf("uploading %s into DataVolume %s/%s: %w; run image-upload again with --no-create to resume", u.o.imagePath, u.namespace, u.name, err)
	}
	if err != nil {
		return fmt.Errorf("uploading %s into DataVolume %s/%s: %w", u.o.imagePath, u.namespace, u.name, err)
	}
	elapsed := time.Since(start)
	fmt.Fprintf(u.streams.ErrOut, "Upload complete; waiting for DataVolume %s/%s to be populated\n", u.namespace, u.name)
	if _, err := u.waitPhase(ctx, cdiv1beta1.Succeeded, u.o.processing); err != nil {
		return err
	}
	rate := ""
	if s := elapsed.Seconds(); s > 0 {
		rate = fmt.Sprintf(", %s/s", formatBytes(int64(float64(size)/s)))
	}
	fmt.Fprintf(u.streams.Out, "Uploaded %s (%s) into DataVolume %s/%s in %s%s; the DataVolume has succeeded\n",
		u.o.imagePath, formatBytes(size), u.namespace, u.name, elapsed.Round(time.Millisecond), rate)
	return nil
}

// uploadPath is the upload subresource of the DataVolume namespace/name.
func uploadPath(namespace, name string) string {
	return fmt.Sprintf("/apis/cdi.kubevirt.io/v1beta1/namespaces/%s/datavolumes/%s/upload", namespace, name)
}

// openImage opens the image file, which must be a regular file, and returns its size.
func openImage(path string) (*os.File, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, fmt.Errorf("--image-path: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("--image-path: %w", err)
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, 0, fmt.Errorf("--image-path %s is not a regular file", path)
	}
	return f, st.Size(), nil
}

// prepare creates the DataVolume, or with --no-create checks that it has an upload source.
func (u *imageUpload) prepare(ctx context.Context) error {
	if u.o.noCreate {
		dv, err := u.dvs.Get(ctx, u.name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return fmt.Errorf("DataVolume %s/%s not found (without --no-create, image-upload creates it)", u.namespace, u.name)
		case err != nil:
			return fmt.Errorf("reading DataVolume %s/%s: %w", u.namespace, u.name, err)
		case dv.Spec.Source == nil || dv.Spec.Source.Upload == nil:
			return fmt.Errorf("DataVolume %s/%s does not take an upload: its source is %s, not upload", u.namespace, u.name, sourceKind(dv.Spec.Source))
		}
		return nil
	}
	_, err := u.dvs.Create(ctx, u.o.dataVolume(u.namespace, u.name), metav1.CreateOptions{})
	switch {
	case apierrors.IsAlreadyExists(err):
		return fmt.Errorf("DataVolume %s/%s already exists: add --no-create to upload into it", u.namespace, u.name)
	case err != nil:
		return fmt.Errorf("creating DataVolume %s/%s: %w", u.namespace, u.name, err)
	}
	fmt.Fprintf(u.streams.ErrOut, "DataVolume %s/%s created\n", u.namespace, u.name)
	return nil
}

// dataVolume is the DataVolume image-upload creates.
func (o *imageUploadOptions) dataVolume(namespace, name string) *cdiv1beta1.DataVolume {
	storage := &cdiv1beta1.StorageSpec{
		Resources: cdiv1beta1.VolumeResourceRequirements{Requests: cdiv1beta1.ResourceList{cdiv1beta1.ResourceStorage: o.storage}},
	}
	if o.storageClass != "" {
		sc := o.storageClass
		storage.StorageClassName = &sc
	}
	if o.accessMode != "" {
		storage.AccessModes = []cdiv1beta1.PersistentVolumeAccessMode{cdiv1beta1.PersistentVolumeAccessMode(o.accessMode)}
	}
	return &cdiv1beta1.DataVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: cdiv1beta1.DataVolumeSpec{
			Source:  &cdiv1beta1.DataVolumeSource{Upload: &cdiv1beta1.DataVolumeSourceUpload{}},
			Storage: storage,
		},
	}
}

// sourceKind names a DataVolume's source for a message.
func sourceKind(s *cdiv1beta1.DataVolumeSource) string {
	switch {
	case s == nil:
		return "unset"
	case s.HTTP != nil:
		return "http"
	case s.Registry != nil:
		return "registry"
	case s.Blank != nil:
		return "blank"
	case s.PVC != nil:
		return "pvc"
	}
	return "unset"
}

// waitPhase reads the DataVolume every poll until its phase is want, for at most timeout. It
// fails at once when the DataVolume has failed or is gone, and when it has already succeeded
// while an upload is awaited.
func (u *imageUpload) waitPhase(ctx context.Context, want cdiv1beta1.DataVolumePhase, timeout time.Duration) (*cdiv1beta1.DataVolume, error) {
	deadline := time.Now().Add(timeout)
	var seen cdiv1beta1.DataVolumePhase
	last := "not read yet"
	for {
		dv, err := u.dvs.Get(ctx, u.name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return nil, fmt.Errorf("DataVolume %s/%s was deleted", u.namespace, u.name)
		case err != nil:
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			last = err.Error() // kube-apiserver may be restarting: keep trying
		case dv.Status.Phase == want:
			return dv, nil
		case dv.Status.Phase == cdiv1beta1.Failed:
			return dv, fmt.Errorf("DataVolume %s/%s is %s: %s", u.namespace, u.name, dv.Status.Phase, runningMessage(dv))
		case want == cdiv1beta1.UploadReady && dv.Status.Phase == cdiv1beta1.Succeeded:
			return dv, fmt.Errorf("DataVolume %s/%s has already Succeeded: its data is in place, there is nothing to upload into", u.namespace, u.name)
		default:
			last = "phase " + phaseName(dv.Status.Phase)
			if dv.Status.Phase != seen {
				seen = dv.Status.Phase
				fmt.Fprintf(u.streams.ErrOut, "DataVolume %s/%s: %s\n", u.namespace, u.name, last)
			}
		}
		if !time.Now().Add(u.o.poll).Before(deadline) {
			return nil, fmt.Errorf("DataVolume %s/%s is not %s after %s (%s)", u.namespace, u.name, want, timeout, last)
		}
		if err := sleepCtx(ctx, u.o.poll); err != nil {
			return nil, err
		}
	}
}

// runningMessage is the message of a DataVolume's Running condition, or its reason.
func runningMessage(dv *cdiv1beta1.DataVolume) string {
	for _, c := range dv.Status.Conditions {
		if c.Type != cdiv1beta1.DataVolumeRunning {
			continue
		}
		if c.Message != "" {
			return c.Message
		}
		if c.Reason != "" {
			return c.Reason
		}
	}
	return "its Running condition gives no message"
}

func phaseName(p cdiv1beta1.DataVolumePhase) string {
	if p == cdiv1beta1.PhaseUnset {
		return "not set yet"
	}
	return string(p)
}

// sleepCtx waits for d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
