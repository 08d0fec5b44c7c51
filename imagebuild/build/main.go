// Command build builds Vireo's OCI images into _output/oci (make oci) and, with --push, pushes
// them to a registry and writes the kustomize overlay that installs artifacts/base from there
// (make push REGISTRY=registry.example.com/vireo).
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/vireo-dev/vireo/imagebuild"
)

func main() {
	var opts imagebuild.Options
	var images, push, overlay string
	var insecure bool
	cmd := &cobra.Command{
		Use:          "build",
		Short:        "Build Vireo's OCI images (no Docker engine), optionally push them",
		SilenceUsage: true,
		RunE: func(c *cobra.Command, _ []string) error {
			if images != "" {
				opts.Images = strings.Split(images, ",")
			}
			opts.Log = c.OutOrStdout()
			results, err := imagebuild.Build(c.Context(), opts)
			if err != nil {
				return err
			}
			if err := writeSummary(filepath.Join(opts.Out, "images.json"), results); err != nil {
				return err
			}
			if push == "" {
				return nil
			}
			pushed, err := imagebuild.Push(c.Context(), results, push, insecure)
			if err != nil {
				return err
			}
			for _, p := range pushed {
				fmt.Fprintf(c.OutOrStdout(), "pushed %s\n", p.Ref)
			}
			if err := imagebuild.WriteOverlay(overlay, filepath.Join(opts.Repo, "artifacts", "base"), pushed); err != nil {
				return err
			}
			fmt.Fprintf(c.OutOrStdout(), "overlay: %s (kubectl apply -k %s, after the certificates of artifacts/base/README.md)\n",
				filepath.Join(overlay, "kustomization.yaml"), overlay)
			return nil
		},
	}
	cmd.Flags().StringVar(&opts.Repo, "repo", ".", "The repository's root.")
	cmd.Flags().StringVar(&opts.Out, "out", "_output/oci", "Where the OCI layouts go (one directory per image).")
	cmd.Flags().StringVar(&images, "images", "", "Comma-separated images to build; all when empty.")
	cmd.Flags().StringVar(&push, "push", "", "Push to this registry and path (host[:port]/path), tagged with the version and latest.")
	cmd.Flags().BoolVar(&insecure, "insecure", false, "Push over plain HTTP.")
	cmd.Flags().StringVar(&overlay, "overlay", "_output/oci/overlay", "With --push: where to write the kustomize overlay that uses the pushed images.")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := cmd.ExecuteContext(ctx); err != nil {
		os.Exit(1)
	}
}

func writeSummary(path string, results []imagebuild.Result) error {
	b, err := json.MarshalIndent(results, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
