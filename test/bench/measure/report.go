package measure

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// WriteResults writes doc to <dir>/<base>.json and the table that write prints to
// <dir>/<base>.txt and to standard output.
func WriteResults(dir, base string, doc any, write func(io.Writer)) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	jsonFile, txtFile := filepath.Join(dir, base+".json"), filepath.Join(dir, base+".txt")
	if err := os.WriteFile(jsonFile, append(data, '\n'), 0o644); err != nil {
		return err
	}
	f, err := os.Create(txtFile)
	if err != nil {
		return err
	}
	write(io.MultiWriter(os.Stdout, f))
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Printf("\nwritten: %s, %s\n", txtFile, jsonFile)
	return nil
}
