package bindingcontroller

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	configv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/config/v1alpha1"
	"github.com/binding-controller/binding-controller/pkg/interpreter"
)

// +kubebuilder:rbac:groups=config.karmada.io,resources=resourceinterpretercustomizations;resourceinterpreterwebhookconfigurations,verbs=get;list;watch

// Indexes that let a ResourceInterpreterCustomization change re-sync exactly the bindings
// of its target kind, and let a sync find the customizations of its template's kind.
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

// newInterpreter returns the resource interpreter the binding controllers share: the
// cached customizations when the API server serves them, and the bundled ones.
func newInterpreter(reader client.Reader, customizationsServed bool) *interpreter.Interpreter {
	var o interpreter.Options
	if customizationsServed {
		o.Customizations = cachedCustomizations{reader: reader}
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
