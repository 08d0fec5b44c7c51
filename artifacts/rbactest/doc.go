// Package rbactest proves least privilege for the ServiceAccounts of Vireo's components: its
// test expands the RBAC of artifacts/base/rbac (controller.yaml, apiserver.yaml and
// nodeagent.yaml) into the exact set of (namespace, API group, resource, verb, name) grants each
// ServiceAccount holds, and compares it with a table of what each component's code calls,
// entry by entry with the code that needs it. A grant no code uses fails it, as does a call
// the RBAC does not grant, or a wildcard.
//
// The user-facing roles (roles.yaml) are not its subject, nor what Kubernetes grants every
// authenticated user (discovery, /version, kubevirt.io:default).
package rbactest
