package webhook

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Configurations register the server's webhooks for the virtualmachineinstances of group the way
// KubeVirt registers virt-api's: one mutating webhook (CREATE and UPDATE) and separate create and
// update validators, all failing closed, reached at baseURL and trusted through caBundle.
func Configurations(group, baseURL string, caBundle []byte) (*admissionregistrationv1.MutatingWebhookConfiguration, *admissionregistrationv1.ValidatingWebhookConfiguration) {
	rule := func(ops ...admissionregistrationv1.OperationType) []admissionregistrationv1.RuleWithOperations {
		scope := admissionregistrationv1.NamespacedScope
		return []admissionregistrationv1.RuleWithOperations{{
			Operations: ops,
			Rule: admissionregistrationv1.Rule{
				APIGroups: []string{group}, APIVersions: []string{"v1"},
				Resources: []string{"virtualmachineinstances"}, Scope: &scope,
			},
		}}
	}
	client := func(path string) admissionregistrationv1.WebhookClientConfig {
		url := baseURL + path
		return admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: caBundle}
	}
	fail := admissionregistrationv1.Fail
	none := admissionregistrationv1.SideEffectClassNone
	timeout := int32(10)
	equivalent := admissionregistrationv1.Equivalent
	never := admissionregistrationv1.NeverReinvocationPolicy
	versions := []string{"v1"}

	mutating := &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "virtualmachineinstances-mutator." + group},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name:          "virtualmachineinstances-mutator." + group,
			ClientConfig:  client(MutatePath),
			Rules:         rule(admissionregistrationv1.Create, admissionregistrationv1.Update),
			FailurePolicy: &fail, SideEffects: &none, TimeoutSeconds: &timeout, MatchPolicy: &equivalent,
			ReinvocationPolicy: &never, AdmissionReviewVersions: versions,
		}},
	}
	validator := func(name, path string, op admissionregistrationv1.OperationType) admissionregistrationv1.ValidatingWebhook {
		return admissionregistrationv1.ValidatingWebhook{
			Name: name + "." + group, ClientConfig: client(path), Rules: rule(op),
			FailurePolicy: &fail, SideEffects: &none, TimeoutSeconds: &timeout, MatchPolicy: &equivalent,
			AdmissionReviewVersions: versions,
		}
	}
	validating := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "virtualmachineinstances-validator." + group},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{
			validator("virtualmachineinstances-create-validator", ValidateCreatePath, admissionregistrationv1.Create),
			validator("virtualmachineinstances-update-validator", ValidateUpdatePath, admissionregistrationv1.Update),
		},
	}
	return mutating, validating
}
