// SPDX-License-Identifier: Apache-2.0

package soaker

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
	"github.com/binding-controller/binding-controller/pkg/names"
)

// Scope says which ResourceBindings and Works a check looks at.
type Scope struct {
	// Namespaces of the bindings; Works are matched to them by their
	// resourcebinding.karmada.io/namespace annotation. Empty: every namespace.
	Namespaces []string
}

func (s Scope) has(namespace string) bool {
	return len(s.Namespaces) == 0 || slices.Contains(s.Namespaces, namespace)
}

// Problem is one way in which the Works of a binding are not what the binding asks for.
type Problem struct {
	// Binding is namespace/name of the binding concerned (for an orphan: the one its
	// annotations name).
	Binding string
	// Cluster is the member cluster concerned, or "" for the binding itself.
	Cluster string
	// What happened, e.g. "missing Work", "orphan Work x (binding gone)".
	What string
}

func (p Problem) String() string {
	if p.Cluster == "" {
		return p.Binding + ": " + p.What
	}
	return p.Binding + " @" + p.Cluster + ": " + p.What
}

// State is what one check found.
type State struct {
	// Bindings counts the ResourceBindings in scope (live and terminating).
	Bindings int
	// Works counts the Works in scope (live and terminating).
	Works int
	// Problems is empty when everything has converged.
	Problems []Problem
}

// Converged tells whether the check found no problem.
func (s *State) Converged() bool { return len(s.Problems) == 0 }

// UnconvergedBindings returns the bindings with a problem, sorted.
func (s *State) UnconvergedBindings() []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range s.Problems {
		if !seen[p.Binding] {
			seen[p.Binding] = true
			out = append(out, p.Binding)
		}
	}
	sort.Strings(out)
	return out
}

// Summary describes the state in one line, listing at most max problems.
func (s *State) Summary(max int) string {
	if s.Converged() {
		return fmt.Sprintf("converged: %d bindings, %d Works", s.Bindings, s.Works)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "not converged: %d bindings, %d Works, %d problems", s.Bindings, s.Works, len(s.Problems))
	for i, p := range s.Problems {
		if i == max {
			fmt.Fprintf(&b, "\n  … and %d more", len(s.Problems)-max)
			break
		}
		b.WriteString("\n  " + p.String())
	}
	return b.String()
}

// Check compares every ResourceBinding in scope with the Works on the API server, read
// live through c. The bindings and Works have converged when:
//   - no binding is being deleted (a deleted binding's finalizer was released and it is
//     gone), and every binding carries the finalizer karmada.io/binding-controller;
//   - every binding's WorksSynced condition is True for its current generation;
//   - every target cluster of every binding holds exactly one Work of that binding, live
//     (not terminating), named after the template (names.WorkName), labelled with the
//     binding's permanent-id and, for a binding with replicas, carrying the cluster's
//     share in spec.replicas of its manifest;
//   - no Work names a binding that is gone, or a cluster that its binding does not target
//     (an orphan; a terminating orphan counts too).
func Check(ctx context.Context, c client.Reader, scope Scope) (*State, error) {
	bindings := &workv1alpha2.ResourceBindingList{}
	var listOpts []client.ListOption
	if len(scope.Namespaces) == 1 {
		listOpts = append(listOpts, client.InNamespace(scope.Namespaces[0]))
	}
	if err := c.List(ctx, bindings, listOpts...); err != nil {
		return nil, fmt.Errorf("listing ResourceBindings: %w", err)
	}
	works := &workv1alpha1.WorkList{}
	if err := c.List(ctx, works); err != nil {
		return nil, fmt.Errorf("listing Works: %w", err)
	}

	state := &State{}
	// binding key → cluster → its Works there
	byBinding := map[string]map[string][]*workv1alpha1.Work{}
	for i := range works.Items {
		w := &works.Items[i]
		ns, hasNS := w.Annotations[workv1alpha2.ResourceBindingNamespaceAnnotation]
		name, hasName := w.Annotations[workv1alpha2.ResourceBindingNameAnnotation]
		cluster, isExec := names.ClusterOfExecutionNamespace(w.Namespace)
		if !hasNS || !hasName || !isExec || !scope.has(ns) {
			continue
		}
		state.Works++
		key := ns + "/" + name
		if byBinding[key] == nil {
			byBinding[key] = map[string][]*workv1alpha1.Work{}
		}
		byBinding[key][cluster] = append(byBinding[key][cluster], w)
	}

	known := map[string]bool{}
	for i := range bindings.Items {
		rb := &bindings.Items[i]
		if !scope.has(rb.Namespace) {
			continue
		}
		state.Bindings++
		key := rb.Namespace + "/" + rb.Name
		known[key] = true
		state.Problems = append(state.Problems, checkBinding(rb, byBinding[key])...)
	}
	for key, clusters := range byBinding {
		if known[key] {
			continue
		}
		for cluster, ws := range clusters {
			for _, w := range ws {
				state.Problems = append(state.Problems, Problem{Binding: key, Cluster: cluster,
					What: "orphan Work " + describeWork(w) + " (its binding is gone)"})
			}
		}
	}
	sort.SliceStable(state.Problems, func(i, j int) bool {
		a, b := state.Problems[i], state.Problems[j]
		if a.Binding != b.Binding {
			return a.Binding < b.Binding
		}
		return a.Cluster < b.Cluster
	})
	return state, nil
}

func describeWork(w *workv1alpha1.Work) string {
	s := w.Namespace + "/" + w.Name
	if w.DeletionTimestamp != nil {
		s += fmt.Sprintf(", terminating, finalizers %v", w.Finalizers)
	}
	return s
}

func checkBinding(rb *workv1alpha2.ResourceBinding, works map[string][]*workv1alpha1.Work) []Problem {
	key := rb.Namespace + "/" + rb.Name
	var problems []Problem
	add := func(cluster, format string, args ...any) {
		problems = append(problems, Problem{Binding: key, Cluster: cluster, What: fmt.Sprintf(format, args...)})
	}
	if rb.DeletionTimestamp != nil {
		add("", "still being deleted (finalizers %v)", rb.Finalizers)
	} else if !slices.Contains(rb.Finalizers, workv1alpha2.BindingControllerFinalizer) {
		add("", "no finalizer %s", workv1alpha2.BindingControllerFinalizer)
	}
	cond := meta.FindStatusCondition(rb.Status.Conditions, workv1alpha2.ConditionWorksSynced)
	switch {
	case cond == nil:
		add("", "no %s condition", workv1alpha2.ConditionWorksSynced)
	case cond.Status != "True":
		add("", "%s %s %s: %s", cond.Type, cond.Status, cond.Reason, cond.Message)
	case cond.ObservedGeneration != rb.Generation:
		add("", "%s True for generation %d, binding is at %d", cond.Type, cond.ObservedGeneration, rb.Generation)
	}

	workName := names.WorkName(rb.Spec.Resource.Kind, templateNamespace(rb), rb.Spec.Resource.Name)
	permanentID := rb.Labels[workv1alpha2.ResourceBindingPermanentIDLabel]
	targets := targetReplicas(rb)
	for cluster, replicas := range targets {
		ws := works[cluster]
		switch {
		case len(ws) == 0:
			add(cluster, "missing Work %s/%s", names.ExecutionNamespace(cluster), workName)
			continue
		case len(ws) > 1:
			var list []string
			for _, w := range ws {
				list = append(list, describeWork(w))
			}
			add(cluster, "%d Works (duplicated): %s", len(ws), strings.Join(list, "; "))
			continue
		}
		w := ws[0]
		switch {
		case w.DeletionTimestamp != nil:
			add(cluster, "Work %s is terminating", describeWork(w))
		case w.Name != workName:
			add(cluster, "Work %s/%s is not named %s", w.Namespace, w.Name, workName)
		case w.Labels[workv1alpha2.ResourceBindingPermanentIDLabel] != permanentID:
			add(cluster, "Work %s/%s has permanent-id %q, binding %q", w.Namespace, w.Name,
				w.Labels[workv1alpha2.ResourceBindingPermanentIDLabel], permanentID)
		case rb.Spec.Replicas > 0:
			if got, err := manifestReplicas(w); err != nil {
				add(cluster, "Work %s/%s: %v", w.Namespace, w.Name, err)
			} else if got != int64(replicas) {
				add(cluster, "Work %s/%s has replicas %d, binding asks for %d", w.Namespace, w.Name, got, replicas)
			}
		}
	}
	for cluster, ws := range works {
		if _, ok := targets[cluster]; ok {
			continue
		}
		for _, w := range ws {
			add(cluster, "orphan Work %s (cluster not targeted)", describeWork(w))
		}
	}
	return problems
}

func templateNamespace(rb *workv1alpha2.ResourceBinding) string {
	if rb.Spec.Resource.Namespace != "" {
		return rb.Spec.Resource.Namespace
	}
	return rb.Namespace
}

// targetReplicas returns the binding's target clusters (spec.clusters, then
// spec.requiredBy) and each one's replicas; the first entry of a cluster counts.
func targetReplicas(rb *workv1alpha2.ResourceBinding) map[string]int32 {
	out := map[string]int32{}
	for _, tc := range rb.Spec.Clusters {
		if _, ok := out[tc.Name]; !ok {
			out[tc.Name] = tc.Replicas
		}
	}
	for _, snap := range rb.Spec.RequiredBy {
		for _, tc := range snap.Clusters {
			if _, ok := out[tc.Name]; !ok {
				out[tc.Name] = 0
			}
		}
	}
	return out
}

func manifestReplicas(w *workv1alpha1.Work) (int64, error) {
	if len(w.Spec.Workload.Manifests) != 1 {
		return 0, fmt.Errorf("%d manifests, want 1", len(w.Spec.Workload.Manifests))
	}
	var obj struct {
		Spec struct {
			Replicas *int64 `json:"replicas"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(w.Spec.Workload.Manifests[0].Raw, &obj); err != nil {
		return 0, fmt.Errorf("decoding its manifest: %w", err)
	}
	if obj.Spec.Replicas == nil {
		return 0, fmt.Errorf("its manifest has no spec.replicas")
	}
	return *obj.Spec.Replicas, nil
}
