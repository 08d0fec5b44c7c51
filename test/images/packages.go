package images

import (
	"context"
	"fmt"
	"strings"

	"github.com/vireo-dev/vireo/imagebuild/debian"
)

// Package is one resolved Debian package of the guest.
type Package = debian.Package

// Debian packages the guest is made of. The kernel package is the one the metapackage
// depends on today (linux-image-<abi>-amd64), so a kernel security update rebuilds the guest.
const (
	kernelMetaPackage = "linux-image-amd64"
	busyboxPackage    = "busybox-static"
)

// wantedPackages are the packages the guest is resolved from (the others are their
// dependencies); a change of them invalidates a cached resolution.
var wantedPackages = []string{kernelMetaPackage, busyboxPackage, guestAgentPackage, sshServerPackage, sftpServerPackage}

// kernelDependency returns the linux-image-* package a metapackage's Depends names
// ("linux-image-6.1.0-57-amd64 (= 6.1.192-3)").
func kernelDependency(depends string) (string, error) {
	for _, alt := range strings.FieldsFunc(depends, func(r rune) bool { return r == ',' || r == '|' }) {
		name, _, _ := strings.Cut(strings.TrimSpace(alt), " ")
		if strings.HasPrefix(name, "linux-image-") {
			return name, nil
		}
	}
	return "", fmt.Errorf("no linux-image-* package in Depends %q", depends)
}

// resolvePackages finds the kernel package behind the metapackage and the versions of it,
// busybox-static, qemu-guest-agent, dropbear-bin and openssh-sftp-server with the libraries they load that apt would
// download now.
func resolvePackages(ctx context.Context) ([]Package, error) {
	first, err := debian.Show(ctx, kernelMetaPackage, busyboxPackage)
	if err != nil {
		return nil, err
	}
	kname, err := kernelDependency(first[kernelMetaPackage].Depends)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", kernelMetaPackage, err)
	}
	kernel, err := debian.Show(ctx, kname)
	if err != nil {
		return nil, err
	}
	programs, err := debian.Closure(ctx, guestAgentPackage, sshServerPackage, sftpServerPackage)
	if err != nil {
		return nil, err
	}
	pkgs := []Package{kernel[kname], first[busyboxPackage]}
	for _, p := range programs {
		if isGuestProgramPackage(p.Name) {
			pkgs = append(pkgs, p)
		}
	}
	return pkgs, nil
}
