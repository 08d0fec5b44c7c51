// Command importbench measures vireo-importer's throughput against the shell pipelines that do
// the same work, in the same run on the same files served by the same local HTTP server: a
// 1 GiB sparse qcow2 (Vireo: importer.Import; baseline: curl to a scratch file, then qemu-img
// convert to a sparse raw file), a gzip-compressed raw disk (baseline: curl | gzip -d | dd
// conv=sparse) and an upload of the qcow2 (Vireo: vireoctl's upload client sending chunks to
// the importer's upload socket; baseline: curl -T to a server writing a plain file, then
// qemu-img convert), all ending with an fsync of the disk as the importer does. Each figure is the
// median of runs that alternate between the two; it reports MB/s of disk written and CPU seconds per GiB of disk (the process's own and its children's,
// from getrusage), and Vireo's share of the baseline's throughput (target: at least 90 %). It
// writes import.txt and import.json.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/vireo-dev/vireo/importer"
	"github.com/vireo-dev/vireo/importer/uploadapi"
	"github.com/vireo-dev/vireo/importer/uploadclient"
	"github.com/vireo-dev/vireo/test/bench/measure"
)

// diskSize is the images' virtual size; dataMiB of it hold data, spread over the disk.
const (
	diskSize = 1 << 30
	dataMiB  = 192
)

func main() {
	out := flag.String("out", "_output/bench", "Directory for import.txt and import.json.")
	runs := flag.Int("runs", 5, "Runs per image and side (alternating); the median is reported.")
	work := flag.String("work", "/var/tmp", "Directory for the images and the imported disks (a real disk, not a tmpfs).")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := bench(ctx, *out, *work, *runs); err != nil {
		fmt.Fprintln(os.Stderr, "importbench:", err)
		os.Exit(1)
	}
}

// result is one image's figures for one side.
type result struct {
	Seconds    float64 `json:"seconds"`
	MBPerS     float64 `json:"diskMBPerSecond"`
	CPUPerGiB  float64 `json:"cpuSecondsPerGiB"`
	AllSeconds []float64
}

type row struct {
	Image    string  `json:"image"`
	Bytes    int64   `json:"sourceBytes"`
	Vireo    result  `json:"vireo"`
	Baseline result  `json:"baseline"`
	Ratio    float64 `json:"throughputRatio"`
	Command  string  `json:"baselineCommand"`
}

func bench(ctx context.Context, out, work string, runs int) error {
	for _, tool := range []string{"qemu-img", "curl", "gzip", "dd"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("%s is not installed (hack/install-deps.sh installs qemu-utils; curl, gzip and dd come with Debian)", tool)
		}
	}
	dir, err := os.MkdirTemp(work, "importbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	say("building the images in %s", dir)
	if err := buildImages(dir); err != nil {
		return err
	}
	base, stopServer, err := serve(dir)
	if err != nil {
		return err
	}
	defer stopServer()
	// Baselines are formats of the URL (%[1]s), the output directory (%[2]s) and the file
	// (%[3]s); the server takes a PUT to /put/scratch into the output directory.
	download := func(url string) error { return importOnce(ctx, &importer.HTTPSource{URL: url}, dir) }
	cases := []struct {
		label, file, baseline string
		vireo                 func(url string) error
	}{
		{"disk.qcow2", "disk.qcow2", "curl -sSf -o %[2]s/scratch %[1]s && qemu-img convert -f qcow2 -O raw -S 4k %[2]s/scratch %[2]s/disk.img && sync %[2]s/disk.img && rm %[2]s/scratch", download},
		{"disk.raw.gz", "disk.raw.gz", "curl -sSf %[1]s | gzip -dc | dd of=%[2]s/disk.img bs=64k conv=sparse status=none && sync %[2]s/disk.img", download},
		{"disk.qcow2 upload", "disk.qcow2", "curl -sSf -T %[3]s " + base + "/put/scratch && qemu-img convert -f qcow2 -O raw -S 4k %[2]s/scratch %[2]s/disk.img && sync %[2]s/disk.img && rm %[2]s/scratch",
			func(string) error { return uploadOnce(ctx, filepath.Join(dir, "disk.qcow2"), dir) }},
	}
	var rows []row
	for _, c := range cases {
		path := filepath.Join(dir, c.file)
		st, err := os.Stat(path)
		if err != nil {
			return err
		}
		r := row{Image: c.label, Bytes: st.Size(), Command: fmt.Sprintf(c.baseline, base+"/"+c.file, "$OUT", c.file)}
		var vireo, baseline []sample
		for i := range runs {
			say("%s: run %d of %d", c.label, i+1, runs)
			v, err := timed(func() error { return c.vireo(base + "/" + c.file) })
			if err != nil {
				return fmt.Errorf("vireo-importer, %s: %w", c.label, err)
			}
			outDir := filepath.Join(dir, "out")
			b, err := timed(func() error { return shellOnce(ctx, fmt.Sprintf(c.baseline, base+"/"+c.file, outDir, path), outDir) })
			if err != nil {
				return fmt.Errorf("baseline, %s: %w", c.label, err)
			}
			vireo, baseline = append(vireo, v), append(baseline, b)
		}
		r.Vireo, r.Baseline = summarize(vireo), summarize(baseline)
		r.Ratio = r.Vireo.MBPerS / r.Baseline.MBPerS
		rows = append(rows, r)
	}
	return report(out, rows)
}

// sample is one run's wall and CPU time (the process's and its children's).
type sample struct{ wall, cpu time.Duration }

func timed(f func() error) (sample, error) {
	cpu0 := cpuTime()
	start := time.Now()
	err := f()
	return sample{wall: time.Since(start), cpu: cpuTime() - cpu0}, err
}

// cpuTime is the user and system time of this process and its waited-for children.
func cpuTime() time.Duration {
	var self, children syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children)
	tv := func(t syscall.Timeval) time.Duration {
		return time.Duration(t.Sec)*time.Second + time.Duration(t.Usec)*time.Microsecond
	}
	return tv(self.Utime) + tv(self.Stime) + tv(children.Utime) + tv(children.Stime)
}

// summarize takes the median run by wall time.
func summarize(s []sample) result {
	slices.SortFunc(s, func(a, b sample) int { return int(a.wall - b.wall) })
	m := s[len(s)/2]
	r := result{Seconds: m.wall.Seconds(), MBPerS: float64(diskSize) / 1e6 / m.wall.Seconds(), CPUPerGiB: m.cpu.Seconds() * float64(1<<30) / diskSize}
	for _, x := range s {
		r.AllSeconds = append(r.AllSeconds, x.wall.Seconds())
	}
	return r
}

// importOptions are the options of an import of source into fresh directories below dir.
func importOptions(source importer.Source, dir string) (importer.Options, error) {
	target, scratch := filepath.Join(dir, "target"), filepath.Join(dir, "scratch")
	for _, d := range []string{target, scratch} {
		if err := os.RemoveAll(d); err != nil {
			return importer.Options{}, err
		}
		if err := os.Mkdir(d, 0o700); err != nil {
			return importer.Options{}, err
		}
	}
	// A volume whose usable size is exactly the disk's.
	capacity := int64(math.Ceil(diskSize/(1-importer.DefaultFilesystemOverhead))) + 1<<20
	return importer.Options{Source: source, TargetDir: target, ScratchDir: scratch,
		Capacity: capacity, FilesystemOverhead: importer.DefaultFilesystemOverhead}, nil
}

// importOnce imports source with the importer's own pipeline.
func importOnce(ctx context.Context, source importer.Source, dir string) error {
	o, err := importOptions(source, dir)
	if err != nil {
		return err
	}
	_, err = importer.Import(ctx, o)
	return err
}

// uploadOnce uploads the file image with vireoctl's client of the upload protocol to the
// importer's upload socket, as the node agent relays it.
func uploadOnce(ctx context.Context, image, dir string) error {
	socket := filepath.Join(dir, uploadapi.SocketName)
	o, err := importOptions(importer.NewUploadSource(socket), dir)
	if err != nil {
		return err
	}
	imported := make(chan error, 1)
	go func() {
		_, err := importer.ImportUpload(ctx, o)
		imported <- err
	}()
	f, err := os.Open(image)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", socket)
	}}}
	opts := uploadclient.DefaultOptions()
	// Until the importer listens, the first request fails: retry at once.
	opts.Backoff, opts.MaxBackoff = 10*time.Millisecond, 100*time.Millisecond
	if err := uploadclient.Transfer(ctx, &uploadclient.HTTP{Client: client, URL: "http://upload" + uploadapi.Path}, f, st.Size(), opts, nil); err != nil {
		return err
	}
	return <-imported
}

// shellOnce runs a baseline command line into a fresh output directory outDir.
func shellOnce(ctx context.Context, command, outDir string) error {
	if err := os.RemoveAll(outDir); err != nil {
		return err
	}
	if err := os.Mkdir(outDir, 0o700); err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, "bash", "-o", "pipefail", "-c", command)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%v: %s", err, b)
	}
	return nil
}

// buildImages writes disk.qcow2 and disk.raw.gz of a 1 GiB raw disk whose dataMiB MiB of data
// (text-like, so it compresses) are spread evenly over it.
func buildImages(dir string) error {
	raw := filepath.Join(dir, "disk.raw")
	f, err := os.Create(raw)
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(1, 2))
	block := make([]byte, 1<<20)
	const alphabet = "abcdefghijklmnop \n"
	stride := int64(diskSize / dataMiB)
	for i := range int64(dataMiB) {
		for j := range block {
			block[j] = alphabet[rng.IntN(len(alphabet))]
		}
		if _, err := f.WriteAt(block, i*stride); err != nil {
			f.Close()
			return err
		}
	}
	if err := f.Truncate(diskSize); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	steps := [][]string{
		{"qemu-img", "convert", "-f", "raw", "-O", "qcow2", raw, filepath.Join(dir, "disk.qcow2")},
		{"bash", "-c", "gzip -1 -c " + raw + " > " + filepath.Join(dir, "disk.raw.gz")},
	}
	for _, step := range steps {
		if b, err := exec.Command(step[0], step[1:]...).CombinedOutput(); err != nil {
			return fmt.Errorf("%v: %v: %s", step, err, b)
		}
	}
	return os.Remove(raw)
}

// serve serves dir over HTTP on loopback, and takes the baseline's uploads.
func serve(dir string) (string, func(), error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("GET /", http.FileServer(http.Dir(dir)))
	// curl -T: the body into the output directory's scratch file, as a plain upload server does.
	mux.HandleFunc("PUT /put/scratch", func(w http.ResponseWriter, r *http.Request) {
		f, err := os.Create(filepath.Join(dir, "out", "scratch"))
		if err == nil {
			_, err = io.Copy(f, r.Body)
			err = errors.Join(err, f.Close())
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	return "http://" + l.Addr().String(), func() { _ = srv.Close() }, nil
}

func report(out string, rows []row) error {
	doc := map[string]any{"benchmark": "vireo-importer against curl | qemu-img convert and curl | gzip -d | dd, 1 GiB disks served from loopback; an upload with vireoctl's client to the importer's socket against curl -T to a plain file, then qemu-img convert", "rows": rows,
		"time": time.Now().UTC().Format(time.RFC3339)}
	return measure.WriteResults(out, "import", doc, func(w io.Writer) {
		fmt.Fprintf(w, "Import of a 1 GiB disk (%d MiB of data) served over HTTP on loopback; median of alternating runs.\n\n", dataMiB)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "image\tsource MB\tvireo MB/s\tbaseline MB/s\tratio\tvireo CPU-s/GiB\tbaseline CPU-s/GiB\t")
		for _, r := range rows {
			fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%.0f\t%.2f\t%.2f\t%.2f\t\n", r.Image, float64(r.Bytes)/1e6, r.Vireo.MBPerS, r.Baseline.MBPerS, r.Ratio, r.Vireo.CPUPerGiB, r.Baseline.CPUPerGiB)
		}
		_ = tw.Flush()
		fmt.Fprintln(w, "\nTarget (the issue's): at least 90 % of the baseline's throughput.")
		for _, r := range rows {
			verdict := "met"
			if r.Ratio < 0.9 {
				verdict = "NOT met"
			}
			fmt.Fprintf(w, "  %-18s %.0f %%: %s; baseline: %s\n", r.Image, 100*r.Ratio, verdict, r.Command)
		}
	})
}

func say(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "importbench %s: %s\n", time.Now().Format("15:04:05.000"), fmt.Sprintf(format, args...))
}
