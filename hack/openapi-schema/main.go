// Command openapi-schema prints the OpenAPI v2 definitions of Vireo's API types as JSON. The code
// generator feeds it to applyconfiguration-gen, which embeds it so that the generated
// Extract<Kind> functions know each type's structure for server-side apply.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/util"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/vireo-dev/vireo/generated/openapi"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "openapi-schema: %v\n", err)
		os.Exit(1)
	}
}

// definitionName turns a Go type path ("k8s.io/x/v1.T") into the REST-friendly name
// applyconfiguration-gen looks up ("io.k8s.x.v1.T"); names that already are model names
// (dotted, without a slash) are kept as they are.
func definitionName(name string) string {
	if strings.Contains(name, "/") {
		return util.ToRESTFriendlyName(name)
	}
	return name
}

func run() error {
	ref := func(name string) spec.Ref {
		return spec.MustCreateRef("#/definitions/" + definitionName(name))
	}
	defs := openapi.GetOpenAPIDefinitions(ref)
	schemas := make(map[string]spec.Schema, len(defs))
	for name, def := range defs {
		// Types with a separate v2 form carry it in an extension; the v2 form is what we print.
		if v2, ok := def.Schema.Extensions[common.ExtensionV2Schema].(spec.Schema); ok {
			schemas[definitionName(name)] = v2
			continue
		}
		schemas[definitionName(name)] = def.Schema
	}
	doc := spec.Swagger{SwaggerProps: spec.SwaggerProps{
		Swagger:     "2.0",
		Info:        &spec.Info{InfoProps: spec.InfoProps{Title: "Vireo", Version: "unversioned"}},
		Definitions: schemas,
	}}
	out, err := json.MarshalIndent(&doc, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding definitions: %w", err)
	}
	_, err = os.Stdout.Write(append(out, '\n'))
	return err
}
