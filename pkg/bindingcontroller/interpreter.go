package bindingcontroller

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	configv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/config/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
	"github.com/binding-controller/binding-controller/pkg/interpreter"
	"github.com/binding-controller/binding-controller/pkg/interpreter/webhook"
)

// +kubebuilder:rbac:groups=config.karmada.io,resources=resourceinterpretercustomizations;resourceinterpreterwebhookconfigurations,verbs=get;list;watch

// Indexes that let a ResourceInterpreterCustomization or ResourceInterpreterWebhookConfiguration
// change re-sync exactly the bindings of the kinds it targets, and let a sync find the
// customizations of its template's kind.
const (
	// bindingByTemplateKindIndex holds kindKey of spec.resource.
	bindingByTemplateKindIndex = "binding.work.karmada.io/template-kind"
	// customizationByTargetIndex holds kindKey of spec.target.
	customizationByTargetIndex = "config.karmada.io/target"
)

// kindKey is how both indexes name a kind: group, version and kind, as Karmada matches a
// customization to a resource.
func kindKey(apiVersion, kind string) string {
	return schema.FromAPIVersionAndKind(apiVersion, kind).String()
}

// setupInterpreterIndexes registers the bindings' template-kind index and, when the API
// server serves them, the customizations' target index.
func setupInterpreterIndexes(ctx context.Context, indexer client.FieldIndexer, customizationsServed bool) error {
	for _, k := range []kind{resourceBinding, clusterResourceBinding} {
		specOf := k.specOf
		if err := indexer.IndexField(ctx, k.newObject(), bindingByTemplateKindIndex, func(obj client.Object) []string {
			ref := specOf(obj).Resource
			return []string{kindKey(ref.APIVersion, ref.Kind)}
		}); err != nil {
			return err
		}
	}
	if !customizationsServed {
		return nil
	}
	return indexer.IndexField(ctx, &configv1alpha1.ResourceInterpreterCustomization{}, customizationByTargetIndex, func(obj client.Object) []string {
		t := obj.(*configv1alpha1.ResourceInterpreterCustomization).Spec.Target
		return []string{kindKey(t.APIVersion, t.Kind)}
	})
}

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

// interpreterInputs says which of the resource interpreter's inputs the API server
// serves; what it does not serve is neither read nor watched.
type interpreterInputs struct {
	customizations bool
	webhooks       bool
}

// newInterpreter returns the resource interpreter the binding controllers share: the
// cached customizations and webhook configurations the API server serves, and the
// bundled customizations.
func newInterpreter(reader client.Reader, served interpreterInputs) *interpreter.Interpreter {
	var o interpreter.Options
	if served.customizations {
		o.Customizations = cachedCustomizations{reader: reader}
	}
	if served.webhooks {
		o.Webhooks = webhook.NewReviser(cachedWebhookConfigurations{reader: reader})
	}
	return interpreter.New(o)
}

// watchCustomizations re-syncs the bindings of a customization's target kind when the
// customization is created, changed or deleted. On a change the old and the new target
// are both re-synced, so a kind the customization stops targeting goes back to its
// bundled or native rules.
func (r *Reconciler) watchCustomizations(b *builder.Builder) *builder.Builder {
	if !r.CustomizationsServed {
		return b
	}
	return b.Watches(&configv1alpha1.ResourceInterpreterCustomization{}, handler.EnqueueRequestsFromMapFunc(r.bindingsInterpretedBy))
}

// watchWebhookConfigurations re-syncs the bindings whose template kind a
// ResourceInterpreterWebhookConfiguration's ReviseReplica rules match, before and after a
// change, so a kind it takes up or lets go of is re-rendered.
func (r *Reconciler) watchWebhookConfigurations(b *builder.Builder) *builder.Builder {
	if !r.WebhooksServed {
		return b
	}
	return b.Watches(&configv1alpha1.ResourceInterpreterWebhookConfiguration{}, handler.EnqueueRequestsFromMapFunc(r.bindingsRevisedByWebhooks))
}

func (r *Reconciler) bindingsRevisedByWebhooks(ctx context.Context, obj client.Object) []reconcile.Request {
	c, ok := obj.(*configv1alpha1.ResourceInterpreterWebhookConfiguration)
	if !ok {
		return nil
	}
	const op = configv1alpha1.InterpreterOperationReviseReplica
	kinds, anyKind := webhook.Kinds(c, op)
	if anyKind {
		// A "*" in a rule matches kinds no index lookup can enumerate: match every
		// cached binding's template kind instead. Configurations change rarely.
		return r.bindingsWhere(ctx, func(ref workv1alpha2.ObjectReference) bool {
			return webhook.Handles(c, schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind), op)
		})
	}
	keys := make([]string, 0, len(kinds))
	for _, gvk := range kinds {
		keys = append(keys, gvk.String())
	}
	return r.bindingsIndexed(ctx, bindingByTemplateKindIndex, keys)
}

// bindingsWhere returns the cached bindings of this reconciler's kind whose template
// reference passes match.
func (r *Reconciler) bindingsWhere(ctx context.Context, match func(workv1alpha2.ObjectReference) bool) []reconcile.Request {
	k := kindOf(r.Kind)
	list := k.newList()
	if err := r.Client.List(ctx, list, client.UnsafeDisableDeepCopy); err != nil {
		return nil
	}
	var requests []reconcile.Request
	_ = meta.EachListItem(list, func(o runtime.Object) error {
		obj := o.(client.Object)
		if match(k.specOf(obj).Resource) {
			requests = append(requests, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(obj)})
		}
		return nil
	})
	return requests
}

func (r *Reconciler) bindingsInterpretedBy(ctx context.Context, obj client.Object) []reconcile.Request {
	c, ok := obj.(*configv1alpha1.ResourceInterpreterCustomization)
	if !ok {
		return nil
	}
	return r.bindingsIndexed(ctx, bindingByTemplateKindIndex, []string{kindKey(c.Spec.Target.APIVersion, c.Spec.Target.Kind)})
}

// replicaReviser is the interpreter for one sync: its clusters share one lookup of the
// template kind's customizations.
func (r *Reconciler) replicaReviser(ctx context.Context) *interpreter.Bound {
	return r.Interpreter.For(ctx)
}

// mayPassOnRetry tells a render failure that a retry may not meet again (an interpreter
// script past its time limit, customizations not readable) from bad input: a broken
// script fails the same way until its customization or the template changes, and both
// changes re-sync the binding, so it is parked like other bad input.
func mayPassOnRetry(err error) bool {
	var transient interface{ Transient() bool }
	return errors.As(err, &transient) && transient.Transient()
}
