// SPDX-License-Identifier: Apache-2.0

package interpreter

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	configv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/config/v1alpha1"
	"github.com/binding-controller/binding-controller/pkg/interpreter/luavm"
	"github.com/binding-controller/binding-controller/pkg/interpreter/thirdparty"
	"github.com/binding-controller/binding-controller/pkg/interpreter/webhook"
)

// CustomizationLister returns the ResourceInterpreterCustomizations that target a kind.
type CustomizationLister interface {
	CustomizationsFor(ctx context.Context, gvk schema.GroupVersionKind) ([]configv1alpha1.ResourceInterpreterCustomization, error)
}

// WebhookReviser is the webhook step (webhook.Reviser): it revises obj when a webhook
// handles ReviseReplica for its kind, and says whether one did. Like every hook it leaves
// obj as it is and returns a new object (the patched copy). A *webhook.Error names the
// webhook that failed.
type WebhookReviser interface {
	ReviseReplica(ctx context.Context, obj *unstructured.Unstructured, replicas int64) (revised *unstructured.Unstructured, handled bool, err error)
}

// Options configures an Interpreter.
type Options struct {
	// Customizations lists the user's customizations; nil when the API server does not
	// serve ResourceInterpreterCustomization.
	Customizations CustomizationLister
	// Webhooks is the webhook step; nil: no webhooks.
	Webhooks WebhookReviser
	// VMs is how many Lua states may run at once (default 10).
	VMs int
	// Pool runs the scripts; default a pool of VMs states with luavm.DefaultTimeout.
	Pool *luavm.Pool
}

// Interpreter runs ReviseReplica hooks in Karmada's order.
type Interpreter struct {
	customizations CustomizationLister
	webhooks       WebhookReviser
	vm             *luavm.Pool
	bundled        map[schema.GroupVersionKind]script
}

// script is a ReviseReplica script and the hook it comes from.
type script struct {
	hook string
	lua  string
}

// New returns an Interpreter.
func New(o Options) *Interpreter {
	if o.VMs <= 0 {
		o.VMs = 10
	}
	if o.Pool == nil {
		o.Pool = luavm.NewPool(o.VMs, luavm.DefaultTimeout)
	}
	bundled := map[schema.GroupVersionKind]script{}
	for gvk, c := range merge(thirdparty.Customizations()) {
		bundled[gvk] = script{hook: fmt.Sprintf("bundled customization %q", c.name), lua: c.lua}
	}
	return &Interpreter{customizations: o.Customizations, webhooks: o.Webhooks, vm: o.Pool, bundled: bundled}
}

// ReviseReplica returns obj with its replicas set to replicas for cluster by the first
// hook that handles its kind, and whether one did (when none does, obj is returned as it
// is and the native rules apply). obj is not modified; a revised object is a new one,
// sharing no map or slice with obj.
func (i *Interpreter) ReviseReplica(ctx context.Context, obj *unstructured.Unstructured, replicas int64, cluster string) (*unstructured.Unstructured, bool, error) {
	return i.revise(ctx, obj, replicas, cluster, i.customizationFor)
}

// customizationFor returns the user's ReviseReplica script for gvk, if any.
func (i *Interpreter) customizationFor(ctx context.Context, gvk schema.GroupVersionKind) (script, bool, error) {
	if i.customizations == nil {
		return script{}, false, nil
	}
	list, err := i.customizations.CustomizationsFor(ctx, gvk)
	if err != nil {
		return script{}, false, fmt.Errorf("listing the customizations of %s: %w", gvk, err)
	}
	c, ok := merge(list)[gvk]
	if !ok {
		return script{}, false, nil
	}
	return script{hook: fmt.Sprintf("ResourceInterpreterCustomization %q", c.name), lua: c.lua}, true, nil
}

func (i *Interpreter) revise(ctx context.Context, obj *unstructured.Unstructured, replicas int64, cluster string,
	customizationFor func(context.Context, schema.GroupVersionKind) (script, bool, error)) (*unstructured.Unstructured, bool, error) {
	gvk := obj.GroupVersionKind()
	fail := func(hook string, err error, transient bool) (*unstructured.Unstructured, bool, error) {
		return nil, false, &Error{Operation: configv1alpha1.InterpreterOperationReviseReplica, Hook: hook,
			Object: describe(obj), Cluster: cluster, Err: err, transient: transient}
	}
	s, ok, err := customizationFor(ctx, gvk)
	if err != nil {
		return fail("ResourceInterpreterCustomization", err, true)
	}
	if ok {
		return i.runScript(ctx, obj, replicas, s, fail)
	}
	if i.webhooks != nil {
		revised, handled, err := i.webhooks.ReviseReplica(ctx, obj, replicas)
		if err != nil {
			// Every webhook failure may pass on retry: the webhook's answers can change
			// with no change to any object this controller watches.
			var we *webhook.Error
			if errors.As(err, &we) {
				return fail(we.Hook(), we.Err, true)
			}
			return fail("the interpreter webhooks", err, true)
		}
		if handled {
			return revised, true, nil
		}
	}
	if s, ok := i.bundled[gvk]; ok {
		return i.runScript(ctx, obj, replicas, s, fail)
	}
	return obj, false, nil
}

func (i *Interpreter) runScript(ctx context.Context, obj *unstructured.Unstructured, replicas int64, s script,
	fail func(string, error, bool) (*unstructured.Unstructured, bool, error)) (*unstructured.Unstructured, bool, error) {
	revised, err := i.vm.ReviseReplica(ctx, s.lua, obj.Object, replicas)
	if err != nil {
		return fail(s.hook, err, false)
	}
	return &unstructured.Unstructured{Object: revised}, true, nil
}

// For binds the interpreter to one sync's context, for callers (render) that take no
// context. The sync's clusters share what the first of them looked up of a kind's
// customizations: a sync renders every cluster's Work from one template, and a change
// to a customization re-syncs the bindings it concerns.
func (i *Interpreter) For(ctx context.Context) *Bound {
	return &Bound{ctx: ctx, i: i}
}

// Bound is an Interpreter bound to one sync. Its clusters may render concurrently.
type Bound struct {
	ctx context.Context
	i   *Interpreter

	mu     sync.Mutex
	looked map[schema.GroupVersionKind]lookup
}

// lookup is what a kind's customizations came to: its script, or none.
type lookup struct {
	s  script
	ok bool
}

// ReviseReplica is Interpreter.ReviseReplica with the bound context.
func (b *Bound) ReviseReplica(obj *unstructured.Unstructured, replicas int64, cluster string) (*unstructured.Unstructured, bool, error) {
	return b.i.revise(b.ctx, obj, replicas, cluster, b.customizationFor)
}

// customizationFor looks a kind's customizations up once per sync. A lookup that fails
// is not kept: the next cluster tries again.
func (b *Bound) customizationFor(ctx context.Context, gvk schema.GroupVersionKind) (script, bool, error) {
	b.mu.Lock()
	l, done := b.looked[gvk]
	b.mu.Unlock()
	if done {
		return l.s, l.ok, nil
	}
	s, ok, err := b.i.customizationFor(ctx, gvk)
	if err != nil {
		return script{}, false, err
	}
	b.mu.Lock()
	if b.looked == nil {
		b.looked = map[schema.GroupVersionKind]lookup{}
	}
	b.looked[gvk] = lookup{s: s, ok: ok}
	b.mu.Unlock()
	return s, ok, nil
}

// merged is the ReviseReplica script a kind ends up with, and the customization it is from.
type merged struct {
	name string
	lua  string
}

// merge combines customizations per target kind as Karmada does (configmanager
// LoadConfig, resourceCustomAccessor.setReplicaRevision): in name order, the first
// customization with a ReplicaRevision script keeps it; a later one only fills a script
// the earlier ones left empty. Kinds whose scripts are all empty have none.
func merge(list []configv1alpha1.ResourceInterpreterCustomization) map[schema.GroupVersionKind]merged {
	sorted := append([]configv1alpha1.ResourceInterpreterCustomization{}, list...)
	sort.Slice(sorted, func(a, b int) bool { return sorted[a].Name < sorted[b].Name })
	out := map[schema.GroupVersionKind]merged{}
	for _, c := range sorted {
		rev := c.Spec.Customizations.ReplicaRevision
		if rev == nil || rev.LuaScript == "" {
			continue
		}
		gvk := schema.FromAPIVersionAndKind(c.Spec.Target.APIVersion, c.Spec.Target.Kind)
		if _, kept := out[gvk]; !kept {
			out[gvk] = merged{name: c.Name, lua: rev.LuaScript}
		}
	}
	return out
}

func describe(obj *unstructured.Unstructured) string {
	if obj.GetNamespace() == "" {
		return fmt.Sprintf("%s %s", obj.GetKind(), obj.GetName())
	}
	return fmt.Sprintf("%s %s/%s", obj.GetKind(), obj.GetNamespace(), obj.GetName())
}
