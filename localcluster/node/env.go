package node

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
)

// EnvLookup reads the Secrets and ConfigMaps a container's environment refers to.
type EnvLookup interface {
	// Secret returns the data of Secret namespace/name; found is false when it does not exist.
	Secret(namespace, name string) (data map[string][]byte, found bool, err error)
	// ConfigMap returns the data of ConfigMap namespace/name; found is false when it does not exist.
	ConfigMap(namespace, name string) (data map[string]string, found bool, err error)
}

// EnvInput is everything a container's environment depends on.
type EnvInput struct {
	// Pod is the container's Pod.
	Pod *corev1.Pod
	// Container is the container whose environment is built.
	Container *corev1.Container
	// PodIPs are the Pod's addresses, primary first (status.podIP and status.podIPs).
	PodIPs []string
	// HostIPs are the node's addresses, primary first (status.hostIP and status.hostIPs).
	HostIPs []string
	// NodeAllocatable stands in for a resourceFieldRef's limit that the container does not set.
	NodeAllocatable corev1.ResourceList
	// Lookup reads Secrets and ConfigMaps; it may be nil when the container refers to none.
	Lookup EnvLookup
	// Service holds the service link variables (KubernetesServiceEnv): visible to $(VAR) and
	// added after the container's own variables unless it defines the same name.
	Service map[string]string
	// Base holds NAME=value variables the runtime provides (PATH, HOSTNAME): the lowest
	// precedence and not visible to $(VAR), as an image's environment.
	Base []string
}

// KubernetesServiceEnv is the service link variables of the "kubernetes" Service at host:port,
// which a kubelet gives every container so in-cluster clients find kube-apiserver.
func KubernetesServiceEnv(host string, port int32) map[string]string {
	p := strconv.Itoa(int(port))
	addr := "tcp://" + host + ":" + p
	if strings.Contains(host, ":") {
		addr = "tcp://[" + host + "]:" + p
	}
	prefix := "KUBERNETES_PORT_" + p + "_TCP"
	return map[string]string{
		"KUBERNETES_SERVICE_HOST":       host,
		"KUBERNETES_SERVICE_PORT":       p,
		"KUBERNETES_SERVICE_PORT_HTTPS": p,
		"KUBERNETES_PORT":               addr,
		prefix:                          addr,
		prefix + "_PROTO":               "tcp",
		prefix + "_PORT":                p,
		prefix + "_ADDR":                host,
	}
}

// envList is an environment in order of first definition, where a later definition replaces
// the value in place.
type envList struct {
	names  []string
	values map[string]string
}

func (l *envList) set(name, value string) {
	if l.values == nil {
		l.values = map[string]string{}
	}
	if _, ok := l.values[name]; !ok {
		l.names = append(l.names, name)
	}
	l.values[name] = value
}

// ContainerEnv builds a container's environment as NAME=value strings, the way a kubelet does:
// envFrom first (later sources override earlier ones, names that are not valid variable names
// are skipped), then env, whose values see $(VAR) of earlier variables and of the service
// variables, then the service variables the container does not define. It also returns the
// envFrom keys it skipped, for an event. A missing mandatory Secret, ConfigMap or key is a
// ContainerError with reason CreateContainerConfigError.
func ContainerEnv(in EnvInput) (env []string, skipped []string, err error) {
	var vars envList
	for i, from := range in.Container.EnvFrom {
		bad, err := addEnvFrom(&vars, in, from)
		if err != nil {
			return nil, nil, configError("container %q envFrom[%d]: %v", in.Container.Name, i, err)
		}
		skipped = append(skipped, bad...)
	}
	visible := func(name string) (string, bool) {
		if v, ok := vars.values[name]; ok {
			return v, true
		}
		v, ok := in.Service[name]
		return v, ok
	}
	for _, e := range in.Container.Env {
		if e.Value != "" || e.ValueFrom == nil {
			vars.set(e.Name, Expand(e.Value, visible))
			continue
		}
		v, ok, err := valueFrom(in, e.ValueFrom)
		if err != nil {
			return nil, nil, configError("container %q env %s: %v", in.Container.Name, e.Name, err)
		}
		if ok {
			vars.set(e.Name, v)
		}
	}
	return assemble(in.Base, vars, in.Service), skipped, nil
}

// assemble orders the final environment: base variables nothing overrides, the container's,
// then the service variables it does not define (sorted, for a stable result).
func assemble(base []string, vars envList, service map[string]string) []string {
	var out []string
	for _, kv := range base {
		name, _, _ := strings.Cut(kv, "=")
		if _, ok := vars.values[name]; ok {
			continue
		}
		if _, ok := service[name]; ok {
			continue
		}
		out = append(out, kv)
	}
	for _, name := range vars.names {
		out = append(out, name+"="+vars.values[name])
	}
	names := make([]string, 0, len(service))
	for name := range service {
		if _, ok := vars.values[name]; !ok {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		out = append(out, name+"="+service[name])
	}
	return out
}

// addEnvFrom adds one envFrom source's keys with its prefix and returns the names it skipped.
func addEnvFrom(vars *envList, in EnvInput, from corev1.EnvFromSource) ([]string, error) {
	var data map[string]string
	switch {
	case from.ConfigMapRef != nil:
		cm, err := lookupConfigMap(in, from.ConfigMapRef.Name, from.ConfigMapRef.Optional)
		if err != nil || cm == nil {
			return nil, err
		}
		data = cm
	case from.SecretRef != nil:
		s, err := lookupSecret(in, from.SecretRef.Name, from.SecretRef.Optional)
		if err != nil || s == nil {
			return nil, err
		}
		data = make(map[string]string, len(s))
		for k, v := range s {
			data[k] = string(v)
		}
	default:
		return nil, fmt.Errorf("names neither a configMapRef nor a secretRef; set one of them")
	}
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var skipped []string
	for _, k := range keys {
		name := from.Prefix + k
		if len(validation.IsRelaxedEnvVarName(name)) != 0 {
			skipped = append(skipped, name)
			continue
		}
		vars.set(name, data[k])
	}
	return skipped, nil
}

func isOptional(p *bool) bool { return p != nil && *p }

// lookupConfigMap reads a ConfigMap; an optional missing one is nil without error.
func lookupConfigMap(in EnvInput, name string, optional *bool) (map[string]string, error) {
	if in.Lookup == nil {
		return nil, fmt.Errorf("ConfigMap %s/%s cannot be read: the node has no lookup", in.Pod.Namespace, name)
	}
	data, found, err := in.Lookup.ConfigMap(in.Pod.Namespace, name)
	switch {
	case err != nil:
		return nil, fmt.Errorf("reading ConfigMap %s/%s: %w", in.Pod.Namespace, name, err)
	case !found && isOptional(optional):
		return nil, nil
	case !found:
		return nil, fmt.Errorf("ConfigMap %s/%s not found; create it or mark the reference optional", in.Pod.Namespace, name)
	}
	if data == nil {
		data = map[string]string{}
	}
	return data, nil
}

// lookupSecret reads a Secret; an optional missing one is nil without error.
func lookupSecret(in EnvInput, name string, optional *bool) (map[string][]byte, error) {
	if in.Lookup == nil {
		return nil, fmt.Errorf("secret %s/%s cannot be read: the node has no lookup", in.Pod.Namespace, name)
	}
	data, found, err := in.Lookup.Secret(in.Pod.Namespace, name)
	switch {
	case err != nil:
		return nil, fmt.Errorf("reading secret %s/%s: %w", in.Pod.Namespace, name, err)
	case !found && isOptional(optional):
		return nil, nil
	case !found:
		return nil, fmt.Errorf("secret %s/%s not found; create it or mark the reference optional", in.Pod.Namespace, name)
	}
	if data == nil {
		data = map[string][]byte{}
	}
	return data, nil
}

// valueFrom resolves one env var's source; ok is false when an optional source is missing and
// the variable is left out.
func valueFrom(in EnvInput, src *corev1.EnvVarSource) (value string, ok bool, err error) {
	switch {
	case src.FieldRef != nil:
		v, err := FieldValue(in.Pod, src.FieldRef, in.PodIPs, in.HostIPs)
		return v, err == nil, err
	case src.ResourceFieldRef != nil:
		v, err := resourceValue(in, src.ResourceFieldRef)
		return v, err == nil, err
	case src.ConfigMapKeyRef != nil:
		ref := src.ConfigMapKeyRef
		data, err := lookupConfigMap(in, ref.Name, ref.Optional)
		if err != nil || data == nil {
			return "", false, err
		}
		if v, found := data[ref.Key]; found {
			return v, true, nil
		}
		if isOptional(ref.Optional) {
			return "", false, nil
		}
		return "", false, fmt.Errorf("key %q not found in ConfigMap %s/%s; add it or mark the reference optional", ref.Key, in.Pod.Namespace, ref.Name)
	case src.SecretKeyRef != nil:
		ref := src.SecretKeyRef
		data, err := lookupSecret(in, ref.Name, ref.Optional)
		if err != nil || data == nil {
			return "", false, err
		}
		if v, found := data[ref.Key]; found {
			return string(v), true, nil
		}
		if isOptional(ref.Optional) {
			return "", false, nil
		}
		return "", false, fmt.Errorf("key %q not found in secret %s/%s; add it or mark the reference optional", ref.Key, in.Pod.Namespace, ref.Name)
	default:
		return "", false, fmt.Errorf("valueFrom names no source vireo-local supports (fieldRef, resourceFieldRef, configMapKeyRef, secretKeyRef)")
	}
}

// FieldValue is the value of a downward API field of the Pod, for fieldRef.
func FieldValue(pod *corev1.Pod, ref *corev1.ObjectFieldSelector, podIPs, hostIPs []string) (string, error) {
	if ref.APIVersion != "" && ref.APIVersion != "v1" {
		return "", fmt.Errorf("fieldRef apiVersion %q is not supported; use v1", ref.APIVersion)
	}
	p := ref.FieldPath
	if key, ok := subscript(p, "metadata.labels"); ok {
		return pod.Labels[key], nil
	}
	if key, ok := subscript(p, "metadata.annotations"); ok {
		return pod.Annotations[key], nil
	}
	switch p {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	case "spec.nodeName":
		return pod.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "status.podIP":
		return first(podIPs), nil
	case "status.podIPs":
		return strings.Join(podIPs, ","), nil
	case "status.hostIP":
		return first(hostIPs), nil
	case "status.hostIPs":
		return strings.Join(hostIPs, ","), nil
	}
	return "", fmt.Errorf("fieldRef %q is not a supported field; use metadata.name, metadata.namespace, metadata.uid, "+
		"metadata.labels['<key>'], metadata.annotations['<key>'], spec.nodeName, spec.serviceAccountName, "+
		"status.podIP(s) or status.hostIP(s)", p)
}

// subscript parses field['key'] into key.
func subscript(path, field string) (string, bool) {
	rest, ok := strings.CutPrefix(path, field+"['")
	if !ok || !strings.HasSuffix(rest, "']") {
		return "", false
	}
	return strings.TrimSuffix(rest, "']"), true
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// resourceValue is a resourceFieldRef's value: the container's limit (the node's allocatable
// when unset) or request, divided by the divisor and rounded up, as a kubelet does.
func resourceValue(in EnvInput, ref *corev1.ResourceFieldSelector) (string, error) {
	c := in.Container
	if ref.ContainerName != "" && ref.ContainerName != c.Name {
		c = findContainer(in.Pod, ref.ContainerName)
		if c == nil {
			return "", fmt.Errorf("resourceFieldRef names container %q, which the Pod does not have", ref.ContainerName)
		}
	}
	kind, name, _ := strings.Cut(ref.Resource, ".")
	res := corev1.ResourceName(name)
	if res != corev1.ResourceCPU && res != corev1.ResourceMemory && res != corev1.ResourceEphemeralStorage {
		return "", fmt.Errorf("resourceFieldRef %q is not supported; use limits or requests of cpu, memory or ephemeral-storage", ref.Resource)
	}
	var q resource.Quantity
	switch kind {
	case "limits":
		q = c.Resources.Limits[res]
		if q.IsZero() {
			q = in.NodeAllocatable[res]
		}
	case "requests":
		q = c.Resources.Requests[res]
	default:
		return "", fmt.Errorf("resourceFieldRef %q is not supported; use limits or requests of cpu, memory or ephemeral-storage", ref.Resource)
	}
	divisor := ref.Divisor
	if divisor.IsZero() {
		divisor = resource.MustParse("1")
	}
	if res == corev1.ResourceCPU {
		return strconv.FormatInt(int64(math.Ceil(float64(q.MilliValue())/float64(divisor.MilliValue()))), 10), nil
	}
	return strconv.FormatInt(int64(math.Ceil(float64(q.Value())/float64(divisor.Value()))), 10), nil
}

func findContainer(pod *corev1.Pod, name string) *corev1.Container {
	for _, list := range [][]corev1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for i := range list {
			if list[i].Name == name {
				return &list[i]
			}
		}
	}
	return nil
}

// Expand replaces $(VAR) references in s with the values lookup finds, as a kubelet expands a
// container's env values, command and args: $$ is a literal $, and a reference lookup does not
// know, or one without its closing parenthesis, stays as written.
func Expand(s string, lookup func(string) (string, bool)) string {
	if !strings.Contains(s, "$") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 {
				b.WriteString("$(")
				i++
				continue
			}
			name := s[i+2 : i+2+end]
			if v, ok := lookup(name); ok && name != "" {
				b.WriteString(v)
			} else {
				b.WriteString("$(" + name + ")")
			}
			i += 2 + end
		default:
			b.WriteByte('$')
		}
	}
	return b.String()
}
