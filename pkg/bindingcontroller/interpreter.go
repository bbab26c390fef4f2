// SPDX-License-Identifier: Apache-2.0

package bindingcontroller

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/config/v1alpha1"
	"github.com/binding-controller/binding-controller/pkg/interpreter"
	"github.com/binding-controller/binding-controller/pkg/interpreter/webhook"
)

// +kubebuilder:rbac:groups=config.karmada.io,resources=resourceinterpretercustomizations;resourceinterpreterwebhookconfigurations,verbs=get;list;watch

// cachedCustomizations lists a kind's customizations from the cache, by index.
type cachedCustomizations struct{ reader client.Reader }

func (c cachedCustomizations) CustomizationsFor(ctx context.Context, gvk schema.GroupVersionKind) ([]configv1alpha1.ResourceInterpreterCustomization, error) {
	list := &configv1alpha1.ResourceInterpreterCustomizationList{}
	if err := c.reader.List(ctx, list, client.MatchingFields{customizationByTargetIndex: gvk.String()}); err != nil {
		return nil, fmt.Errorf("listing ResourceInterpreterCustomizations: %w", err)
	}
	return list.Items, nil
}

// cachedWebhookConfigurations lists the ResourceInterpreterWebhookConfigurations from the
// cache, without copies: a few objects read on every revision, never modified.
type cachedWebhookConfigurations struct{ reader client.Reader }

func (c cachedWebhookConfigurations) WebhookConfigurations(ctx context.Context) ([]configv1alpha1.ResourceInterpreterWebhookConfiguration, error) {
	list := &configv1alpha1.ResourceInterpreterWebhookConfigurationList{}
	if err := c.reader.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
		return nil, err
	}
	return list.Items, nil
}

// newInterpreter returns the resource interpreter the binding controllers share: the
// cached customizations and webhook configurations the API server serves, and the
// bundled customizations.
func newInterpreter(reader client.Reader, served ServedAPIs) *interpreter.Interpreter {
	var o interpreter.Options
	if served.Customizations {
		o.Customizations = cachedCustomizations{reader: reader}
	}
	if served.Webhooks {
		o.Webhooks = webhook.NewReviser(cachedWebhookConfigurations{reader: reader})
	}
	return interpreter.New(o)
}

// replicaReviser is the interpreter for one sync: its clusters share one lookup of the
// template kind's customizations.
func (r *Reconciler) replicaReviser(ctx context.Context) *interpreter.Bound {
	return r.Interpreter.For(ctx)
}
