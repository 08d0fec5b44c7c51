// Package validation checks kubevirt.io/v1 objects before they are stored,
// with KubeVirt's rules, so that a bad manifest is refused at the API with every problem listed by
// its full field path, instead of failing later on a node. The functions are pure; the registry
// strategies call them after defaulting.
package validation
