package importer

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/klog/v2"

	"github.com/vireo-dev/vireo/importer/importerapi"
)

// Source kinds of the vireo-importer command.
const (
	SourceKindHTTP  = "http"
	SourceKindBlank = "blank"
	SourceKindFile  = "file"
	// SourceKindRegistry reads the disk under /disk/ of a containerDisk image (--url).
	SourceKindRegistry = "registry"
	// SourceKindUpload receives the image through the upload protocol on --upload-socket.
	SourceKindUpload = "upload"
)

// Files of a basic-authentication secret mounted as a directory (CDI's secretRef keys).
const (
	SecretAccessKeyID = "accessKeyId"
	SecretSecretKey   = "secretKey"
)

// CommandOptions are the vireo-importer command's flags.
type CommandOptions struct {
	Source             string
	URL                string
	Path               string
	Headers            []string
	SecretDir          string
	CABundle           string
	InsecureSkipVerify bool
	Checksum           string
	TargetDir          string
	ScratchDir         string
	Capacity           string
	FilesystemOverhead float64
	TerminationLog     string
	ProgressInterval   time.Duration
	// HeaderDirs are directories (mounted Secrets) whose every file but dot files holds one
	// extra header line.
	HeaderDirs []string
	// InsecureRegistries are registries (host[:port]) reached over plain HTTP.
	InsecureRegistries []string
	// ProgressAddress serves the progress at /metrics (empty: not served); OwnerUID labels it.
	ProgressAddress, OwnerUID string
	// UploadSocket is the unix socket of --source=upload; UploadFailureGrace is how long a
	// failure waits to be asked for.
	UploadSocket       string
	UploadFailureGrace time.Duration
}

// NewCommandOptions returns the command's defaults.
func NewCommandOptions() *CommandOptions {
	return &CommandOptions{
		Source:             SourceKindHTTP,
		TargetDir:          "/data",
		ScratchDir:         "/scratch",
		FilesystemOverhead: DefaultFilesystemOverhead,
		ProgressInterval:   5 * time.Second,
		UploadFailureGrace: DefaultUploadFailureGrace,
	}
}

// AddFlags adds the command's flags to fs.
func (c *CommandOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&c.Source, "source", c.Source, "Where the image comes from: http (--url), registry (--url), file (--path), upload (--upload-socket) or blank (an empty disk).")
	fs.StringVar(&c.URL, "url", c.URL, "The image's http:// or https:// URL; for --source=registry its reference (docker://registry/repository:tag, the prefix optional).")
	fs.StringArrayVar(&c.InsecureRegistries, "insecure-registry", c.InsecureRegistries, "A registry (host[:port]) reached over plain HTTP; repeatable.")
	fs.StringVar(&c.Path, "path", c.Path, "The image file, for --source=file.")
	fs.StringArrayVar(&c.Headers, "header", c.Headers, "An extra HTTP request header, \"Name: value\"; repeatable.")
	fs.StringArrayVar(&c.HeaderDirs, "header-dir", c.HeaderDirs, "A directory (a mounted Secret) whose every file holds an extra HTTP header line \"Name: value\"; repeatable. Its values never appear in messages.")
	fs.StringVar(&c.SecretDir, "secret-dir", c.SecretDir, "A directory with files "+SecretAccessKeyID+" and "+SecretSecretKey+": the HTTP basic-authentication user and password.")
	fs.StringVar(&c.CABundle, "ca-bundle", c.CABundle, "A PEM file, or a directory of them (a mounted ConfigMap), of certificates trusted for https in addition to the system's.")
	fs.BoolVar(&c.InsecureSkipVerify, "insecure-skip-verify", c.InsecureSkipVerify, "Do not verify the https server's certificate.")
	fs.StringVar(&c.Checksum, "checksum", c.Checksum, "The expected digest of the image as downloaded, <md5|sha1|sha256|sha512>:<hex>.")
	fs.StringVar(&c.TargetDir, "target-dir", c.TargetDir, "The volume's mount point, where disk.img is written.")
	fs.StringVar(&c.ScratchDir, "scratch-dir", c.ScratchDir, "Where images other than raw are kept while they are converted.")
	fs.StringVar(&c.Capacity, "capacity", c.Capacity, "The volume's capacity: a quantity such as 10Gi, or bytes.")
	fs.Float64Var(&c.FilesystemOverhead, "filesystem-overhead", c.FilesystemOverhead, "The fraction of the capacity kept for the file system; 0 for a block volume.")
	fs.StringVar(&c.TerminationLog, "termination-log", c.TerminationLog, "A file to write the error message to on failure, such as /dev/termination-log.")
	fs.DurationVar(&c.ProgressInterval, "progress-interval", c.ProgressInterval, "How often to log the progress.")
	fs.StringVar(&c.ProgressAddress, "progress-address", c.ProgressAddress, "Serve the progress as the metric "+importerapi.ProgressMetric+" at /metrics on this address, such as :8443 (empty: do not serve it).")
	fs.StringVar(&c.OwnerUID, "owner-uid", c.OwnerUID, "The UID of the DataVolume imported, the label ownerUID of the progress metric.")
	fs.StringVar(&c.UploadSocket, "upload-socket", c.UploadSocket, "For --source=upload: the unix socket to serve the upload protocol on (created with mode 0660; a stale socket there is replaced).")
	fs.DurationVar(&c.UploadFailureGrace, "upload-failure-grace", c.UploadFailureGrace, "For --source=upload: how long a failed import keeps answering until a request was told the failure.")
}

// Options turns the flags into Import's options, reading the files they name.
func (c *CommandOptions) Options() (Options, error) {
	o := Options{
		Checksum:           c.Checksum,
		TargetDir:          c.TargetDir,
		ScratchDir:         c.ScratchDir,
		FilesystemOverhead: c.FilesystemOverhead,
		ProgressInterval:   c.ProgressInterval,
	}
	if c.Capacity == "" {
		return o, fmt.Errorf("--capacity is required")
	}
	q, err := resource.ParseQuantity(c.Capacity)
	if err != nil {
		return o, fmt.Errorf("--capacity %q: %w", c.Capacity, err)
	}
	o.Capacity = q.Value()
	switch c.Source {
	case SourceKindBlank:
		o.Source = BlankSource{}
	case SourceKindFile:
		if c.Path == "" {
			return o, fmt.Errorf("--source=file needs --path")
		}
		o.Source = FileSource{Path: c.Path}
	case SourceKindHTTP:
		o.Source, err = c.httpSource()
	case SourceKindRegistry:
		o.Source, err = c.registrySource()
	case SourceKindUpload:
		if c.UploadSocket == "" {
			return o, fmt.Errorf("--source=upload needs --upload-socket")
		}
		up := NewUploadSource(c.UploadSocket)
		up.FailureGrace = c.UploadFailureGrace
		o.Source = up
	default:
		err = fmt.Errorf("--source %q is not one of %s, %s, %s, %s, %s", c.Source, SourceKindHTTP, SourceKindRegistry, SourceKindFile, SourceKindUpload, SourceKindBlank)
	}
	return o, err
}

func (c *CommandOptions) httpSource() (*HTTPSource, error) {
	if c.URL == "" {
		return nil, fmt.Errorf("--source=http needs --url")
	}
	s := &HTTPSource{URL: c.URL, Headers: c.Headers, InsecureSkipVerify: c.InsecureSkipVerify}
	for _, dir := range c.HeaderDirs {
		lines, err := readHeaderDir(dir)
		if err != nil {
			return nil, err
		}
		s.Headers = append(s.Headers, lines...)
	}
	var err error
	s.Username, s.Password, s.CABundle, err = c.credentials()
	return s, err
}

// readHeaderDir reads the header lines of a mounted Secret: one per file, dot files skipped.
func readHeaderDir(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("reading the header secret: %w", err)
	}
	var lines []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("reading the header secret: %w", err)
		}
		lines = append(lines, strings.TrimRight(string(b), "\r\n"))
	}
	return lines, nil
}

func (c *CommandOptions) registrySource() (*RegistrySource, error) {
	if c.URL == "" {
		return nil, fmt.Errorf("--source=registry needs --url, the image's reference")
	}
	s := &RegistrySource{Image: c.URL, Insecure: c.InsecureRegistries}
	var err error
	s.Username, s.Password, s.CABundle, err = c.credentials()
	return s, err
}

// credentials reads the basic-authentication secret and the CA bundle the flags name.
func (c *CommandOptions) credentials() (user, password string, ca []byte, err error) {
	if c.SecretDir != "" {
		u, err := os.ReadFile(filepath.Join(c.SecretDir, SecretAccessKeyID))
		if err != nil {
			return "", "", nil, fmt.Errorf("reading the basic-authentication secret: %w", err)
		}
		p, err := os.ReadFile(filepath.Join(c.SecretDir, SecretSecretKey))
		if err != nil {
			return "", "", nil, fmt.Errorf("reading the basic-authentication secret: %w", err)
		}
		user, password = string(u), string(p)
	}
	if c.CABundle != "" {
		if ca, err = readPEMs(c.CABundle); err != nil {
			return "", "", nil, fmt.Errorf("reading the CA bundle: %w", err)
		}
	}
	return user, password, ca, nil
}

// readPEMs reads a PEM file, or every file of a directory but its dot files (a mounted
// ConfigMap keeps its own bookkeeping in ..data), concatenated.
func readPEMs(path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return os.ReadFile(path)
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, err
	}
	var out []byte
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(path, e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(append(out, b...), '\n')
	}
	return out, nil
}

// Run imports as the flags say, logging the progress, and writes the error message to the
// termination log on failure.
func (c *CommandOptions) Run(ctx context.Context) error {
	o, err := c.Options()
	gauge := &progressGauge{}
	if err == nil && c.ProgressAddress != "" {
		err = serveProgress(ctx, c.ProgressAddress, c.OwnerUID, gauge)
	}
	if err == nil {
		klog.InfoS("Importing", "source", o.Source, "targetDir", o.TargetDir, "capacity", o.Capacity)
		// The gauge follows every second; the log every ProgressInterval.
		o.ProgressInterval = min(c.ProgressInterval, time.Second)
		var logged time.Time
		o.Progress = func(received, total int64) {
			gauge.set(received, total)
			if time.Since(logged) >= c.ProgressInterval {
				logged = time.Now()
				klog.InfoS("Import progress", "progress", FormatProgress(received, total), "received", received, "total", total)
			}
		}
		var res Result
		if up, ok := o.Source.(*UploadSource); ok {
			up.Progress = gauge.set
			res, err = ImportUpload(ctx, o)
		} else {
			res, err = Import(ctx, o)
		}
		if err == nil {
			klog.InfoS("Import complete", "path", res.Path, "format", res.Format, "compression", res.Compression,
				"imageSize", res.ImageSize, "size", res.Size, "received", res.Received)
			return nil
		}
	}
	klog.ErrorS(err, "Import failed", "transient", IsTransient(err))
	if c.TerminationLog != "" {
		if werr := os.WriteFile(c.TerminationLog, []byte(err.Error()), 0o644); werr != nil {
			klog.ErrorS(werr, "Writing the termination log", "path", c.TerminationLog)
		}
	}
	return err
}
