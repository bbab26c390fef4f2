// SPDX-License-Identifier: Apache-2.0

package compat_test

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-cmp/cmp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/binding-controller/binding-controller/internal/testenv/envtestutil"
	"github.com/binding-controller/binding-controller/internal/testenv/workwebhook"
	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
	"github.com/binding-controller/binding-controller/pkg/names"
)

var _ = Describe("Every case of the compatibility table", func() {
	dirs, err := filepath.Glob(filepath.Join(envtestutil.RepoRoot(), "pkg", "render", "testdata", "golden", "*"))
	if err != nil || len(dirs) == 0 {
		panic(fmt.Sprintf("no cases in pkg/render/testdata/golden: %v", err))
	}
	for _, webhook := range []bool{false, true} {
		name := "on a bare API server"
		if webhook {
			name = "behind karmada-webhook's Work mutation"
		}
		Context(name, Ordered, func() {
			BeforeAll(func() { startPlane(webhook) })
			for _, dir := range dirs {
				It("gives Karmada's Works for "+filepath.Base(dir), func() { runCase(loadCase(dir), webhook) })
			}
		})
	}
})

// tableCase is one directory of the table: objects in, per-cluster Works (or errors) out.
type tableCase struct {
	dir      string
	binding  *unstructured.Unstructured
	template *unstructured.Unstructured
	others   []*unstructured.Unstructured // override policies, Clusters and interpreter customizations
	wants    map[string]string            // cluster → want-<cluster>.yaml
}

func loadCase(dir string) tableCase {
	c := tableCase{dir: dir, wants: map[string]string{}}
	c.binding = documents(filepath.Join(dir, "binding.yaml"))[0]
	c.template = documents(filepath.Join(dir, "template.yaml"))[0]
	c.others = append(documents(filepath.Join(dir, "clusters.yaml")), documents(filepath.Join(dir, "policies.yaml"))...)
	c.others = append(c.others, documents(filepath.Join(dir, "customizations.yaml"))...)
	paths, err := filepath.Glob(filepath.Join(dir, "want-*.yaml"))
	Expect(err).NotTo(HaveOccurred())
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		Expect(err).NotTo(HaveOccurred())
		c.wants[strings.TrimSuffix(strings.TrimPrefix(filepath.Base(p), "want-"), ".yaml")] = string(raw)
	}
	return c
}

func documents(path string) []*unstructured.Unstructured {
	raw, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	Expect(err).NotTo(HaveOccurred())
	var out []*unstructured.Unstructured
	for _, doc := range strings.Split(string(raw), "\n---") {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		j, err := yaml.YAMLToJSON([]byte(doc))
		Expect(err).NotTo(HaveOccurred(), path)
		u := &unstructured.Unstructured{}
		Expect(u.UnmarshalJSON(j)).To(Succeed(), path)
		out = append(out, u)
	}
	return out
}

// runCase creates the case's objects, waits for each cluster's Work (or its error in the
// binding's WorksSynced condition) and compares the stored Work with the table's.
// Behind the webhook, the table's Work is what the webhook makes of it, with the
// permanent ID the stored Work was given.
func runCase(c tableCase, webhook bool) {
	for _, ns := range []string{c.template.GetNamespace(), c.binding.GetNamespace()} {
		ensureNamespace(ns)
	}
	for cluster := range c.wants {
		if names.ValidateClusterName(cluster) == nil {
			ensureNamespace(names.ExecutionNamespace(cluster))
		}
	}
	declared := map[string]bool{}
	for _, o := range c.others {
		create(asNew(o))
		if o.GetKind() == "Cluster" {
			declared[o.GetName()] = true
		}
	}
	// Without its Cluster object a cluster gets no Work. A case's clusters.yaml lists every
	// Cluster there is; without one, every target has joined with a bare Cluster.
	for cluster := range c.wants {
		if names.ValidateClusterName(cluster) == nil && len(declared) == 0 {
			u := &unstructured.Unstructured{}
			u.SetAPIVersion("cluster.karmada.io/v1alpha1")
			u.SetKind("Cluster")
			u.SetName(cluster)
			Expect(unstructured.SetNestedField(u.Object, "Push", "spec", "syncMode")).To(Succeed())
			create(u)
		}
	}
	stored := createTemplate(c.template)

	// Runs after the binding's own cleanup: its Works are gone before the next case.
	DeferCleanup(func() {
		for _, want := range c.wants {
			if strings.HasPrefix(want, "error: ") {
				continue
			}
			key := workKey(decode([]byte(want)))
			Eventually(func() bool { return apierrors.IsNotFound(k8s.Get(ctx, key, &workv1alpha1.Work{})) }).Should(BeTrue(), "work %s is deleted", key)
		}
	})
	binding := asNew(c.binding)
	Expect(unstructured.SetNestedField(binding.Object, string(stored.GetUID()), "spec", "resource", "uid")).To(Succeed())
	Expect(unstructured.SetNestedField(binding.Object, stored.GetResourceVersion(), "spec", "resource", "resourceVersion")).To(Succeed())
	create(binding)

	for cluster, want := range c.wants {
		if msg, isError := strings.CutPrefix(want, "error: "); isError {
			head := strings.TrimSpace(msg)
			if len(head) > 120 {
				head = head[:120]
			}
			Eventually(worksSynced(binding)).Should(ContainSubstring(cluster+": "), cluster)
			Expect(worksSynced(binding)()).To(ContainSubstring(head), cluster)
			continue
		}
		key := workKey(decode([]byte(want)))
		// Compared until it matches: a Work written before the controller's cache saw the
		// case's customization is rewritten once it does.
		Eventually(func(g Gomega) {
			wantWork := decode([]byte(asStored(want, c.template, stored)))
			got := &workv1alpha1.Work{}
			g.Expect(k8s.Get(ctx, key, got)).To(Succeed())
			gotWork := normalized(got)
			if webhook {
				wantWork = admitted(wantWork, got.Labels[workv1alpha2.WorkPermanentIDLabel])
			}
			delete(wantWork, "status")
			ignoreDefaulted(gotWork, wantWork, "spec", "workload", "manifests", stored.Object, c.template.Object)
			g.Expect(cmp.Diff(wantWork, gotWork)).To(BeEmpty(), "cluster %s: the stored Work differs from %s (-want +got)", cluster, c.dir)
		}).Should(Succeed(), cluster)
	}
}

// asStored is a table Work for the template as the API server stored it: its UID,
// generation and cluster IP (the one it allocated), not the case's.
func asStored(want string, golden, stored *unstructured.Unstructured) string {
	want = strings.ReplaceAll(want, string(golden.GetUID()), string(stored.GetUID()))
	goldenIP, _, _ := unstructured.NestedString(golden.Object, "spec", "clusterIP")
	storedIP, _, _ := unstructured.NestedString(stored.Object, "spec", "clusterIP")
	if golden.GetKind() == "Service" && goldenIP != "" && goldenIP != "None" && storedIP != "" {
		want = strings.ReplaceAll(want, "- "+goldenIP+"\n", "- "+storedIP+"\n")
		want = strings.ReplaceAll(want, "clusterIP: "+goldenIP+"\n", "clusterIP: "+storedIP+"\n")
	}
	return strings.ReplaceAll(want,
		fmt.Sprintf("resourcetemplate.karmada.io/generation: \"%d\"", golden.GetGeneration()),
		fmt.Sprintf("resourcetemplate.karmada.io/generation: \"%d\"", stored.GetGeneration()))
}

// createTemplate creates the case's template as a user would: without what the API server
// assigns. A Job's completions split breaks ties by its UID's hash; the template is created
// again until its UID falls in the same class as the case's (Karmada's tieBreakerByUID).
func createTemplate(golden *unstructured.Unstructured) *unstructured.Unstructured {
	for range 32 {
		t := asNew(golden)
		if manual, _, _ := unstructured.NestedBool(t.Object, "spec", "manualSelector"); t.GroupVersionKind().GroupKind() == batchJob && !manual {
			unstructured.RemoveNestedField(t.Object, "spec", "selector")
			for _, path := range [][]string{{"metadata", "labels"}, {"spec", "template", "metadata", "labels"}} {
				labels, _, _ := unstructured.NestedStringMap(t.Object, path...)
				for _, generated := range []string{"controller-uid", "job-name", "batch.kubernetes.io/controller-uid", "batch.kubernetes.io/job-name"} {
					delete(labels, generated)
				}
				Expect(unstructured.SetNestedStringMap(t.Object, labels, path...)).To(Succeed())
			}
		}
		if t.GroupVersionKind().GroupKind() == coreService {
			unstructured.RemoveNestedField(t.Object, "spec", "clusterIP")
			unstructured.RemoveNestedField(t.Object, "spec", "clusterIPs")
		}
		create(t)
		stored := &unstructured.Unstructured{}
		stored.SetGroupVersionKind(t.GroupVersionKind())
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(t), stored)).To(Succeed())
		if t.GetKind() != "Job" || uidClass(stored.GetUID()) == uidClass(golden.GetUID()) {
			return stored
		}
		Expect(k8s.Delete(ctx, stored, client.PropagationPolicy(metav1.DeletePropagationBackground))).To(Succeed())
		Eventually(func() bool {
			return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(t), stored.DeepCopy()))
		}).Should(BeTrue())
	}
	Fail("no template UID of the case's class in 32 tries")
	return nil
}

// The kinds whose generated fields the API server refuses from a user; other groups'
// kinds named Job or Service are created as they are.
var (
	batchJob    = schema.GroupKind{Group: "batch", Kind: "Job"}
	coreService = schema.GroupKind{Kind: "Service"}
)

// uidClass is the parity of the FNV-1a hash of a UID, which orders Karmada's tie-breaks.
func uidClass(uid types.UID) uint32 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(uid))
	return h.Sum32() & 1
}

// asNew is o without what the API server assigns, ready to be created; the case's
// objects are deleted again when the spec ends.
func asNew(o *unstructured.Unstructured) *unstructured.Unstructured {
	n := o.DeepCopy()
	for _, f := range []string{"uid", "resourceVersion", "creationTimestamp", "generation", "managedFields", "selfLink"} {
		unstructured.RemoveNestedField(n.Object, "metadata", f)
	}
	unstructured.RemoveNestedField(n.Object, "status")
	return n
}

func create(o *unstructured.Unstructured) {
	Expect(k8s.Create(ctx, o)).To(Succeed(), "%s %s", o.GetKind(), client.ObjectKeyFromObject(o))
	DeferCleanup(func() {
		// A case's template may carry a finalizer of its own; nothing here would release it.
		if len(o.GetFinalizers()) > 0 {
			err := k8s.Patch(ctx, o, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`)))
			Expect(client.IgnoreNotFound(err)).To(Succeed())
		}
		err := k8s.Delete(ctx, o, client.PropagationPolicy(metav1.DeletePropagationBackground))
		if err != nil && !apierrors.IsNotFound(err) {
			Fail(err.Error())
		}
		// Gone, with its finalizers let go: the binding's Works are deleted before the next case.
		Eventually(func() bool {
			return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(o), o.DeepCopy()))
		}).Should(BeTrue(), "%s %s is deleted", o.GetKind(), client.ObjectKeyFromObject(o))
	})
}

func ensureNamespace(name string) {
	if name == "" {
		return
	}
	err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		Fail(err.Error())
	}
}

// worksSynced returns the binding's WorksSynced condition as "Status Reason: Message".
func worksSynced(binding *unstructured.Unstructured) func() string {
	return func() string {
		b := &unstructured.Unstructured{}
		b.SetGroupVersionKind(binding.GroupVersionKind())
		if err := k8s.Get(ctx, client.ObjectKeyFromObject(binding), b); err != nil {
			return err.Error()
		}
		conditions, _, _ := unstructured.NestedSlice(b.Object, "status", "conditions")
		for _, c := range conditions {
			m := c.(map[string]any)
			if m["type"] == "WorksSynced" {
				return fmt.Sprintf("%v %v: %v", m["status"], m["reason"], m["message"])
			}
		}
		return "none"
	}
}

func workKey(work map[string]any) types.NamespacedName {
	meta := work["metadata"].(map[string]any)
	return types.NamespacedName{Namespace: meta["namespace"].(string), Name: meta["name"].(string)}
}

func decode(y []byte) map[string]any {
	j, err := yaml.YAMLToJSON(y)
	Expect(err).NotTo(HaveOccurred())
	var m map[string]any
	Expect(json.Unmarshal(j, &m)).To(Succeed())
	return m
}

// admitted is the table's Work as karmada-webhook admits it, given the permanent ID the
// stored Work carries.
func admitted(want map[string]any, id string) map[string]any {
	Expect(id).NotTo(BeEmpty(), "the webhook gives every Work a permanent ID")
	j, err := json.Marshal(want)
	Expect(err).NotTo(HaveOccurred())
	w := &workv1alpha1.Work{}
	Expect(json.Unmarshal(j, w)).To(Succeed())
	if w.Labels == nil {
		w.Labels = map[string]string{}
	}
	w.Labels[workv1alpha2.WorkPermanentIDLabel] = id
	Expect(workwebhook.Mutate(w)).To(Succeed())
	return normalized(w)
}

// normalized is a stored Work as the table writes one: without the fields the API server
// assigns, manifests as objects.
func normalized(w *workv1alpha1.Work) map[string]any {
	j, err := json.Marshal(w)
	Expect(err).NotTo(HaveOccurred())
	var m map[string]any
	Expect(json.Unmarshal(j, &m)).To(Succeed())
	m["apiVersion"], m["kind"] = workv1alpha1.GroupVersion.String(), "Work"
	meta := m["metadata"].(map[string]any)
	for _, f := range []string{"uid", "resourceVersion", "creationTimestamp", "generation", "managedFields"} {
		delete(meta, f)
	}
	delete(m, "status")
	return m
}

// ignoreDefaulted drops from each stored manifest the fields the API server's defaulting
// added to the template (present in the stored template, absent from the case's), when the
// table's Work does not have them: they are the API server's, not a rule of Karmada's.
func ignoreDefaulted(got, want map[string]any, path0, path1, path2 string, stored, golden map[string]any) {
	gotManifests, _, _ := unstructured.NestedSlice(got, path0, path1, path2)
	wantManifests, _, _ := unstructured.NestedSlice(want, path0, path1, path2)
	for i := range gotManifests {
		if i < len(wantManifests) {
			pruneAdded(gotManifests[i], wantManifests[i], stored, golden)
		}
	}
	Expect(unstructured.SetNestedSlice(got, gotManifests, path0, path1, path2)).To(Succeed())
}

func pruneAdded(got, want, stored, golden any) {
	switch g := got.(type) {
	case map[string]any:
		w, _ := want.(map[string]any)
		s, _ := stored.(map[string]any)
		gd, _ := golden.(map[string]any)
		for k := range g {
			_, inWant := w[k]
			_, inStored := s[k]
			_, inGolden := gd[k]
			if !inWant && inStored && !inGolden {
				delete(g, k)
				continue
			}
			pruneAdded(g[k], w[k], s[k], gd[k])
		}
	case []any:
		w, _ := want.([]any)
		s, _ := stored.([]any)
		gd, _ := golden.([]any)
		for i := range g {
			pruneAdded(g[i], at(w, i), at(s, i), at(gd, i))
		}
	}
}

func at(l []any, i int) any {
	if i < len(l) {
		return l[i]
	}
	return nil
}
