// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/binding-controller/binding-controller/internal/testenv/controlplane"
	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
	"github.com/binding-controller/binding-controller/pkg/names"
)

// Works are the Works a controller wrote, by namespace/name, as compared: what a
// controller decides (metadata it sets, spec), none of what the API server assigns.
type Works map[string]map[string]any

// runner creates cases on one real API server and has Karmada's binding controller, then
// ours, turn them into Works.
type runner struct {
	plane      *controlplane.Plane
	kubeconfig string
	karmada    controller
	ours       controller
	log        io.Writer
	// settle is how long the Works must stay unchanged before a controller is done.
	settle time.Duration
}

// join creates the members' Cluster objects and execution namespaces.
func (r *runner) join(ctx context.Context) error {
	for _, c := range clusterObjects() {
		if err := r.plane.Client.Create(ctx, c); err != nil {
			return fmt.Errorf("creating Cluster %s: %w", c.GetName(), err)
		}
	}
	return r.plane.CreateNamespaces(ctx, controlplane.ExecutionNamespaces(append(append([]string(nil), Members...), absentMember)))
}

// A batch is what running a batch of cases came to.
type batch struct {
	karmada, ours Works
	// stored are the templates as the API server stored them, by case index.
	stored map[int]*unstructured.Unstructured
	// oursSays is this controller's WorksSynced message, by binding name: why a cluster
	// got no Work.
	oursSays map[string]string
}

// run turns cases into Works with each controller in turn, on the same stored objects
// (so template UIDs, on which Job completion ties depend, are the same), and removes them.
func (r *runner) run(ctx context.Context, cases []*Case) (b batch, err error) {
	if b.stored, err = r.create(ctx, cases); err != nil {
		return b, err
	}
	defer func() {
		if cleanupErr := r.remove(ctx, cases); cleanupErr != nil && err == nil {
			err = cleanupErr
		}
	}()
	for _, c := range []struct {
		ctrl controller
		out  *Works
	}{{r.karmada, &b.karmada}, {r.ours, &b.ours}} {
		stop, err := c.ctrl.start(r.kubeconfig)
		if err != nil {
			return b, err
		}
		works, waitErr := r.settled(ctx)
		_ = stop()
		if waitErr != nil {
			return b, fmt.Errorf("%s: %w", c.ctrl.name, waitErr)
		}
		*c.out = works
		if err := r.clearWorks(ctx); err != nil {
			return b, err
		}
	}
	b.oursSays, err = r.worksSynced(ctx)
	return b, err
}

// worksSynced reads every binding's WorksSynced message, by binding name.
func (r *runner) worksSynced(ctx context.Context) (map[string]string, error) {
	out := map[string]string{}
	for _, kind := range []string{"ResourceBindingList", "ClusterResourceBindingList"} {
		list := &unstructured.UnstructuredList{}
		list.SetAPIVersion("work.karmada.io/v1alpha2")
		list.SetKind(kind)
		if err := r.plane.Client.List(ctx, list); err != nil {
			return nil, err
		}
		for _, b := range list.Items {
			conditions, _, _ := unstructured.NestedSlice(b.Object, "status", "conditions")
			for _, c := range conditions {
				if c, ok := c.(map[string]any); ok && c["type"] == "WorksSynced" {
					out[b.GetName()], _ = c["message"].(string)
				}
			}
		}
	}
	return out, nil
}

// create creates every case's namespace and objects, and returns each template as stored.
func (r *runner) create(ctx context.Context, cases []*Case) (map[int]*unstructured.Unstructured, error) {
	var namespaces []string
	for _, c := range cases {
		namespaces = append(namespaces, c.Namespace)
	}
	if err := r.plane.CreateNamespaces(ctx, namespaces); err != nil {
		return nil, err
	}
	created := map[string]bool{}
	stored := map[int]*unstructured.Unstructured{}
	for _, c := range cases {
		for _, o := range c.Objects() {
			key := o.GetAPIVersion() + "/" + o.GetKind() + "/" + o.GetNamespace() + "/" + o.GetName()
			if created[key] {
				continue // a batch's customization, shared by its cases
			}
			created[key] = true
			o := o.DeepCopy()
			if o.GetKind() == c.Binding.GetKind() && o.GetName() == c.Binding.GetName() {
				// The binding names its template's UID, as the detector sets it.
				t := stored[c.Index]
				_ = unstructured.SetNestedField(o.Object, string(t.GetUID()), "spec", "resource", "uid")
				_ = unstructured.SetNestedField(o.Object, t.GetResourceVersion(), "spec", "resource", "resourceVersion")
			}
			if err := r.plane.Client.Create(ctx, o); err != nil {
				return nil, fmt.Errorf("case %d: creating %s %s: %w", c.Index, o.GetKind(), o.GetName(), err)
			}
			if o.GetKind() == c.Template.GetKind() && o.GetName() == c.Template.GetName() && o.GetAPIVersion() == c.Template.GetAPIVersion() {
				stored[c.Index] = o
			}
		}
	}
	return stored, nil
}

// emptyGrace is how long a controller that writes no Work at all is given: a batch of one
// case whose every cluster fails (as when shrinking) leaves none, and no change to wait for.
const emptyGrace = 15 * time.Second

// settled waits until the Works have stopped changing for r.settle, and returns them.
func (r *runner) settled(ctx context.Context) (Works, error) {
	begin := time.Now()
	deadline := begin.Add(3 * time.Minute)
	var last string
	stableSince := begin
	for {
		list := &workv1alpha1.WorkList{}
		if err := r.plane.Client.List(ctx, list); err != nil {
			return nil, err
		}
		var versions []string
		for _, w := range list.Items {
			versions = append(versions, w.Namespace+"/"+w.Name+"@"+w.ResourceVersion)
		}
		now := strings.Join(versions, ",")
		if now != last {
			last, stableSince = now, time.Now()
		}
		if time.Since(stableSince) >= r.settle && (len(list.Items) > 0 || time.Since(begin) >= emptyGrace) {
			return normalizeWorks(list.Items)
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the Works did not settle in 3 minutes (%d Works)", len(list.Items))
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// clearWorks deletes every Work, its execution finalizer first: no execution side runs here.
func (r *runner) clearWorks(ctx context.Context) error {
	list := &workv1alpha1.WorkList{}
	if err := r.plane.Client.List(ctx, list); err != nil {
		return err
	}
	for i := range list.Items {
		w := &list.Items[i]
		if err := r.plane.Client.Patch(ctx, w, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`))); client.IgnoreNotFound(err) != nil {
			return err
		}
		if err := r.plane.Client.Delete(ctx, w); client.IgnoreNotFound(err) != nil {
			return err
		}
	}
	for {
		left := &workv1alpha1.WorkList{}
		if err := r.plane.Client.List(ctx, left); err != nil {
			return err
		}
		if len(left.Items) == 0 {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// remove deletes the cases' objects, releasing what finalizers either controller left.
func (r *runner) remove(ctx context.Context, cases []*Case) error {
	for _, c := range cases {
		for _, o := range c.Objects() {
			o := o.DeepCopy()
			err := r.plane.Client.Patch(ctx, o, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`)))
			if client.IgnoreNotFound(err) != nil {
				return err
			}
			if err := r.plane.Client.Delete(ctx, o); client.IgnoreNotFound(err) != nil {
				return err
			}
		}
		// The namespace stays (no namespace controller runs here); it is empty.
		_ = r.plane.Client.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: c.Namespace}})
	}
	return nil
}

// normalizeWorks keeps what a controller decides of each Work: its name and namespace,
// labels, annotations, finalizers and spec, with each manifest decoded.
func normalizeWorks(items []workv1alpha1.Work) (Works, error) {
	out := Works{}
	for _, w := range items {
		var manifests []any
		for _, m := range w.Spec.Workload.Manifests {
			var v any
			if err := json.Unmarshal(m.Raw, &v); err != nil {
				return nil, fmt.Errorf("work %s/%s: %w", w.Namespace, w.Name, err)
			}
			manifests = append(manifests, v)
		}
		spec := map[string]any{"workload": map[string]any{"manifests": manifests}}
		if w.Spec.SuspendDispatching != nil {
			spec["suspendDispatching"] = *w.Spec.SuspendDispatching
		}
		if w.Spec.PreserveResourcesOnDeletion != nil {
			spec["preserveResourcesOnDeletion"] = *w.Spec.PreserveResourcesOnDeletion
		}
		meta := map[string]any{"labels": toAny(w.Labels), "annotations": toAny(w.Annotations)}
		finalizers := []any{}
		for _, f := range w.Finalizers {
			finalizers = append(finalizers, f)
		}
		meta["finalizers"] = finalizers
		out[w.Namespace+"/"+w.Name] = map[string]any{"metadata": meta, "spec": spec}
	}
	return out, nil
}

func toAny(m map[string]string) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	return out
}

// clusterOfWork is the cluster a Work key's execution namespace belongs to.
func clusterOfWork(key string) string {
	ns, _, _ := strings.Cut(key, "/")
	cluster, _ := names.ClusterOfExecutionNamespace(ns)
	return cluster
}

// writeFile writes data under dir, creating directories.
func writeFile(dir, name string, data []byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, name), data, 0o644)
}
