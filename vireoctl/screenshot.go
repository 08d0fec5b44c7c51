package vireoctl

import (
	"bytes"
	"fmt"
	"os"
	"strconv"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// pngSignature starts every PNG file.
var pngSignature = []byte("\x89PNG\r\n\x1a\n")

// newScreenshotCommand is `vireoctl vnc screenshot NAME -f FILE`: a PNG of the VMI's display (GET
// .../vnc/screenshot, which needs get on virtualmachineinstances/vnc/screenshot: admin).
func newScreenshotCommand(flags *genericclioptions.ConfigFlags, streams genericiooptions.IOStreams) *cobra.Command {
	var file string
	var moveCursor bool
	cmd := &cobra.Command{
		Use:               "screenshot NAME -f FILE",
		Short:             "Save a PNG screenshot of a VMI's display",
		Example:           "  vireoctl vnc screenshot tiny -f tiny.png\n  vireoctl vnc screenshot tiny -f - > tiny.png",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: nameCompletion(flags, completeVMIs),
		RunE: func(c *cobra.Command, args []string) error {
			if file == "" {
				return fmt.Errorf("--file (-f) is required: the PNG's path, or - for standard output")
			}
			t, client, err := resolveREST(flags)
			if err != nil {
				return err
			}
			png, err := client.Get().AbsPath("/apis/subresources.kubevirt.io/v1/namespaces", t.namespace, "virtualmachineinstances", args[0], "vnc", "screenshot").
				Param("moveCursor", strconv.FormatBool(moveCursor)).SetHeader("Accept", "image/png").Do(orBackground(c.Context())).Raw()
			if err != nil {
				return fmt.Errorf("screenshot of VMI %s/%s: %w", t.namespace, args[0], err)
			}
			if !bytes.HasPrefix(png, pngSignature) {
				return fmt.Errorf("screenshot of VMI %s/%s: the answer is not a PNG (%d bytes)", t.namespace, args[0], len(png))
			}
			if file == "-" {
				_, err := streams.Out.Write(png)
				return err
			}
			if err := os.WriteFile(file, png, 0o644); err != nil {
				return err
			}
			fmt.Fprintf(streams.ErrOut, "screenshot of %s/%s saved to %s (%d bytes)\n", t.namespace, args[0], file, len(png))
			return nil
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "Where to write the PNG (- for standard output).")
	cmd.Flags().BoolVar(&moveCursor, "move-cursor", false, "Move the pointer first, which wakes a blanked screen.")
	return cmd
}
