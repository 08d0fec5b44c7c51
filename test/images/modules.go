package images

import (
	"bytes"
	"debug/elf"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// guestModules are the kernel modules the guest loads, by module name; their dependencies
// are added from each module's own modinfo (the kernel package has no modules.dep: depmod
// runs when it is installed). Built-in ones (modules.builtin) are skipped.
var guestModules = []string{
	// Network: the virtio PCI transport and the NIC (virtio_net pulls net_failover, failover).
	"virtio_pci", "virtio_net",
	// sd_mod's integrity CRCs (crc-t10dif, crc64-rocksoft) ask the crypto API for an
	// implementation by name: the generic ones, loaded first.
	"crct10dif_generic", "crc64_rocksoft_generic",
	// Disks KubeVirt attaches: virtio, virtio-scsi, SATA (q35's AHCI) and IDE (pc's PIIX);
	// sd_mod for SATA/SCSI disks, sr_mod for CD-ROMs.
	"virtio_blk", "virtio_scsi", "ahci", "ata_piix", "sd_mod", "sr_mod",
	// The NoCloud seed is ISO9660 (Joliet names in UTF-8).
	"isofs", "nls_utf8",
	// The ACPI power button as an input device, and the evdev interface acpid reads.
	"button", "evdev",
	// virtio-serial, whose port org.qemu.guest_agent.0 qemu-ga serves.
	"virtio_console",
}

// module is what the build needs to know of one kernel module file.
type module struct {
	Name    string
	Path    string   // the .ko file
	Depends []string // module names, from modinfo's depends=
	SoftPre []string // modinfo's softdep=pre: names (aliases or module names)
}

// modName is the kernel's spelling of a module name: dashes become underscores.
func modName(s string) string { return strings.ReplaceAll(s, "-", "_") }

// readModinfo reads a .ko file's .modinfo section (NUL-separated key=value strings).
func readModinfo(path string) (module, error) {
	m := module{Name: modName(strings.TrimSuffix(filepath.Base(path), ".ko")), Path: path}
	f, err := elf.Open(path)
	if err != nil {
		return m, err
	}
	defer f.Close()
	sec := f.Section(".modinfo")
	if sec == nil {
		return m, fmt.Errorf("%s: no .modinfo section", path)
	}
	data, err := sec.Data()
	if err != nil {
		return m, fmt.Errorf("%s: %w", path, err)
	}
	for _, kv := range bytes.Split(data, []byte{0}) {
		key, val, ok := strings.Cut(string(kv), "=")
		if !ok {
			continue
		}
		switch key {
		case "depends":
			for _, d := range strings.Split(val, ",") {
				if d != "" {
					m.Depends = append(m.Depends, modName(d))
				}
			}
		case "softdep":
			m.SoftPre = append(m.SoftPre, parseSoftPre(val)...)
		}
	}
	return m, nil
}

// parseSoftPre returns the names after "pre:" in a softdep value ("pre: a b post: c").
func parseSoftPre(val string) []string {
	var out []string
	pre := false
	for _, f := range strings.Fields(val) {
		switch f {
		case "pre:":
			pre = true
		case "post:":
			pre = false
		default:
			if pre {
				out = append(out, modName(f))
			}
		}
	}
	return out
}

// moduleFiles maps each module name to its .ko file under the kernel package's
// lib/modules/<version>.
func moduleFiles(modDir string) (map[string]string, error) {
	files := map[string]string{}
	err := filepath.WalkDir(filepath.Join(modDir, "kernel"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".ko") {
			files[modName(strings.TrimSuffix(d.Name(), ".ko"))] = p
		}
		return nil
	})
	return files, err
}

// builtinModules reads modules.builtin ("kernel/drivers/.../name.ko" per line).
func builtinModules(modDir string) (map[string]bool, error) {
	b, err := os.ReadFile(filepath.Join(modDir, "modules.builtin"))
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			out[modName(strings.TrimSuffix(filepath.Base(line), ".ko"))] = true
		}
	}
	return out, nil
}

// resolveModules reads the modinfo of roots and of everything they depend on, and returns
// the modules in an order insmod can load them.
func resolveModules(modDir string, roots []string) ([]module, error) {
	files, err := moduleFiles(modDir)
	if err != nil {
		return nil, err
	}
	builtin, err := builtinModules(modDir)
	if err != nil {
		return nil, err
	}
	mods := map[string]module{}
	var read func(name string) error
	read = func(name string) error {
		if _, done := mods[name]; done || builtin[name] {
			return nil
		}
		p, ok := files[name]
		if !ok {
			return fmt.Errorf("kernel module %s is neither built in nor in %s", name, modDir)
		}
		m, err := readModinfo(p)
		if err != nil {
			return err
		}
		mods[name] = m
		for _, d := range m.Depends {
			if err := read(d); err != nil {
				return fmt.Errorf("%s (needed by %s)", err, name)
			}
		}
		// A soft dependency may name an alias; follow only those that are module names.
		for _, d := range m.SoftPre {
			if _, ok := files[d]; ok {
				if err := read(d); err != nil {
					return err
				}
			}
		}
		return nil
	}
	for _, r := range roots {
		if err := read(modName(r)); err != nil {
			return nil, err
		}
	}
	return loadOrder(mods, roots)
}

// loadOrder orders mods so that each comes after its dependencies (and its soft
// pre-dependencies that are in mods), roots in the given order otherwise. A dependency on a
// module missing from mods is taken as built in.
func loadOrder(mods map[string]module, roots []string) ([]module, error) {
	const (
		visiting = 1
		done     = 2
	)
	state := map[string]int{}
	var order []module
	var visit func(name string, chain []string) error
	visit = func(name string, chain []string) error {
		m, ok := mods[name]
		if !ok {
			return nil
		}
		switch state[name] {
		case done:
			return nil
		case visiting:
			return fmt.Errorf("kernel modules depend on each other in a cycle: %s", strings.Join(append(chain, name), " -> "))
		}
		state[name] = visiting
		deps := append(append([]string{}, m.Depends...), m.SoftPre...)
		for _, d := range deps {
			if err := visit(d, append(chain, name)); err != nil {
				return err
			}
		}
		state[name] = done
		order = append(order, m)
		return nil
	}
	// Roots first, in their order; then anything else in mods, by name.
	rest := make([]string, 0, len(mods))
	for name := range mods {
		rest = append(rest, name)
	}
	sort.Strings(rest)
	for _, name := range append(append([]string{}, roots...), rest...) {
		if err := visit(modName(name), nil); err != nil {
			return nil, err
		}
	}
	return order, nil
}
