// SPDX-License-Identifier: Apache-2.0

package templaterevision

import (
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

var bindingGVK = schema.GroupVersionKind{Group: "work.karmada.io", Version: "v1alpha2", Kind: "ResourceBinding"}

func binding() client.Object {
	b := &unstructured.Unstructured{}
	b.SetName("web-deployment")
	b.SetNamespace("default")
	b.SetUID("uid-web")
	return b
}

func deployment(image string, labels map[string]string) *unstructured.Unstructured {
	return deploymentAt(image, labels, 1)
}

func deploymentAt(image string, labels map[string]string, generation int64) *unstructured.Unstructured {
	d := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "default", "resourceVersion": "7", "uid": "uid-d"},
		"spec": map[string]any{"replicas": int64(3), "template": map[string]any{"spec": map[string]any{
			"containers": []any{map[string]any{"name": "web", "image": image}}}}},
		"status": map[string]any{"readyReplicas": int64(3)},
	}}
	d.SetLabels(labels)
	d.SetGeneration(generation)
	return d
}

func newStore(t *testing.T) Store {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return Store{Client: fake.NewClientBuilder().WithScheme(s).Build()}
}

// ensure lists owner's revisions and ensures template's among them, as the controller does.
func ensure(t *testing.T, s Store, owner client.Object, template *unstructured.Unstructured) (*appsv1.ControllerRevision, error) {
	t.Helper()
	revisions, err := s.List(context.Background(), owner, "default")
	if err != nil {
		return nil, err
	}
	rev, after, err := s.Ensure(context.Background(), owner, bindingGVK, "default", template, revisions)
	if err == nil && after[len(after)-1].Name != rev.Name {
		t.Errorf("Ensure's revisions end with %s, want the current %s", after[len(after)-1].Name, rev.Name)
	}
	return rev, err
}

func names(t *testing.T, s Store) []string {
	t.Helper()
	revs, err := s.List(context.Background(), binding(), "default")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range revs {
		out = append(out, r.Name)
	}
	return out
}

// A change of the spec is a new revision, numbered above the others; a change of labels
// or status is not; each revision is owned by the binding and labelled with its UID.
func TestARevisionIsAChangeOfTheSpec(t *testing.T) {
	s := newStore(t)
	first, err := ensure(t, s, binding(), deployment("nginx:1.27", nil))
	if err != nil {
		t.Fatal(err)
	}
	if first.Revision != 1 || !strings.HasPrefix(first.Name, "web-deployment-") {
		t.Fatalf("first revision %s number %d, want web-deployment-<hash> number 1", first.Name, first.Revision)
	}
	if o := first.OwnerReferences; len(o) != 1 || o[0].UID != "uid-web" || o[0].Kind != "ResourceBinding" || !*o[0].Controller {
		t.Errorf("owner references %+v, want the binding as controller", o)
	}
	if first.Labels[BindingUIDLabel] != "uid-web" {
		t.Errorf("labels %v, want %s=uid-web", first.Labels, BindingUIDLabel)
	}

	relabelled := deployment("nginx:1.27", map[string]string{"team": "a"})
	relabelled.Object["status"] = map[string]any{"readyReplicas": int64(1)}
	same, err := ensure(t, s, binding(), relabelled)
	if err != nil || same.Name != first.Name {
		t.Fatalf("after a label and status change: revision %v (err %v), want %s again", same.Name, err, first.Name)
	}

	second, err := ensure(t, s, binding(), deployment("nginx:1.28", nil))
	if err != nil {
		t.Fatal(err)
	}
	if second.Name == first.Name || second.Revision != 2 {
		t.Fatalf("after an image change: revision %s number %d, want a new name, number 2", second.Name, second.Revision)
	}
	if got := names(t, s); len(got) != 2 || got[0] != first.Name || got[1] != second.Name {
		t.Errorf("revisions %v, want [%s %s]", got, first.Name, second.Name)
	}
}

// A reverted change reuses its old revision, renumbered as the newest.
func TestARevertedChangeIsTheNewestRevisionAgain(t *testing.T) {
	s := newStore(t)
	old, _ := ensure(t, s, binding(), deployment("nginx:1.27", nil))
	if _, err := ensure(t, s, binding(), deployment("nginx:1.28", nil)); err != nil {
		t.Fatal(err)
	}
	back, err := ensure(t, s, binding(), deploymentAt("nginx:1.27", nil, 3))
	if err != nil {
		t.Fatal(err)
	}
	if back.Name != old.Name || back.Revision != 3 {
		t.Fatalf("reverted: revision %s number %d, want %s number 3", back.Name, back.Revision, old.Name)
	}
	if g := back.Annotations[TemplateGenerationAnnotation]; g != "3" {
		t.Errorf("reverted revision's template generation %q, want the template's 3", g)
	}
	if got := names(t, s); got[len(got)-1] != old.Name {
		t.Errorf("revisions %v, want %s newest", got, old.Name)
	}
}

// A revision's template is its spec on the current template's metadata, with the
// generation the template had when the revision was current.
func TestARevisionsTemplateKeepsTodaysMetadata(t *testing.T) {
	s := newStore(t)
	old, _ := ensure(t, s, binding(), deploymentAt("nginx:1.27", nil, 4))
	current := deploymentAt("nginx:1.28", map[string]string{"team": "a"}, 5)
	got, err := Template(old, current)
	if err != nil {
		t.Fatal(err)
	}
	image, _, _ := unstructured.NestedSlice(got.Object, "spec", "template", "spec", "containers")
	if image[0].(map[string]any)["image"] != "nginx:1.27" {
		t.Errorf("containers %v, want the old image", image)
	}
	if replicas, found, err := unstructured.NestedInt64(got.Object, "spec", "replicas"); err != nil || !found || replicas != 3 {
		t.Errorf("spec.replicas %d (found %v, err %v), want the int64 3 every unstructured object has", replicas, found, err)
	}
	if got.GetGeneration() != 4 {
		t.Errorf("generation %d, want the revision's 4", got.GetGeneration())
	}
	if got.GetLabels()["team"] != "a" || got.GetResourceVersion() != "7" || got.GetKind() != "Deployment" {
		t.Errorf("metadata %v, kind %s: want the current template's", got.Object["metadata"], got.GetKind())
	}
	if _, ok := got.Object["status"]; ok {
		t.Error("a revision's template carries a status")
	}
	// The current template is not touched.
	got.SetLabels(nil)
	if current.GetLabels()["team"] != "a" {
		t.Error("Template changed the current template's metadata")
	}
}

// Prune keeps the newest revision, at most limit others, and every revision in keep.
func TestPruneKeepsTheLimitAndWhatARolloutRenders(t *testing.T) {
	s, ctx := newStore(t), context.Background()
	var all []string
	for _, image := range []string{"a", "b", "c", "d", "e"} {
		rev, err := ensure(t, s, binding(), deployment(image, nil))
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, rev.Name)
	}
	revisions, err := s.List(ctx, binding(), "default")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Prune(ctx, revisions, 2, all[0]); err != nil {
		t.Fatal(err)
	}
	got := names(t, s)
	want := []string{all[0], all[3], all[4]}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("after pruning to 2 keeping %s: %v, want %v", all[0], got, want)
	}
}

// Another binding's revisions are not this binding's, even in the same namespace.
func TestRevisionsBelongToOneBinding(t *testing.T) {
	s, ctx := newStore(t), context.Background()
	other := binding()
	other.SetName("api-deployment")
	other.SetUID("uid-api")
	if _, err := ensure(t, s, other, deployment("a", nil)); err != nil {
		t.Fatal(err)
	}
	if got := names(t, s); len(got) != 0 {
		t.Errorf("revisions of web-deployment: %v, want none", got)
	}
	list := &appsv1.ControllerRevisionList{}
	if err := s.Client.List(ctx, list); err != nil || len(list.Items) != 1 {
		t.Fatalf("%d revisions stored (err %v), want 1", len(list.Items), err)
	}
}

// A binding deleted and recreated under its name is another binding: the old one's
// revision, not collected yet, is never taken as the new one's.
func TestARecreatedBindingNeverTakesTheOldOnesRevision(t *testing.T) {
	s := newStore(t)
	if _, err := ensure(t, s, binding(), deployment("a", nil)); err != nil {
		t.Fatal(err)
	}
	recreated := binding()
	recreated.SetUID("uid-web-2")
	_, err := ensure(t, s, recreated, deployment("a", nil))
	if err == nil || !strings.Contains(err.Error(), `belongs to another binding (UID "uid-web")`) {
		t.Errorf("ensure over the old binding's revision: %v, want it refused", err)
	}
}

func TestNameStaysAValidObjectName(t *testing.T) {
	long := strings.Repeat("b", 300)
	if n := Name(long, "0123456789"); len(n) != 253 || !strings.HasSuffix(n, "-0123456789") {
		t.Errorf("Name of a 300-character binding: %d characters %q", len(n), n[len(n)-12:])
	}
}
