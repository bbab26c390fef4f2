// SPDX-License-Identifier: Apache-2.0

package bindingcontroller

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
)

// The binding's event can arrive before the template's: Karmada's detector has already
// written the new template's resourceVersion into the binding while this process's cache
// still holds the old template. The Work must carry the template the binding was made
// from, not the cached one.
func TestBindingNewerThanTheCachedTemplateIsRenderedFromTheLiveTemplate(t *testing.T) {
	old := seedDeployment()
	old.ResourceVersion = "41"
	current := seedDeployment()
	current.ResourceVersion = "42"
	current.Spec.Template.Spec.Containers[0].Image = "nginx:1.27"
	rb := seedBinding("member1", "member2")
	rb.Spec.Resource.UID = old.UID
	rb.Spec.Resource.ResourceVersion = current.ResourceVersion

	h := newHarness(t, interceptor.Funcs{}, old, rb)
	live := fake.NewClientBuilder().WithScheme(testScheme(t)).WithRESTMapper(h.client.RESTMapper()).WithObjects(current).Build()
	reads := 0
	h.r.APIReader = countingReader{Reader: live, reads: &reads}

	if err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	for _, cluster := range []string{"member1", "member2"} {
		if image := workImage(t, h.client, cluster); image != "nginx:1.27" {
			t.Errorf("cluster %s: the Work runs image %q, want the binding's template version nginx:1.27", cluster, image)
		}
	}
	if c := h.worksSynced(); c == nil || c.Reason != ReasonSynced {
		t.Errorf("WorksSynced = %+v, want Synced", c)
	}
	if reads != 1 {
		t.Errorf("%d live reads of the template, want 1 for one sync", reads)
	}
}

// A cache at the binding's version or past it (a status update the detector did not copy
// into the binding) is believed: a resync costs no live read.
func TestCacheAtOrPastTheBindingsTemplateVersionIsBelieved(t *testing.T) {
	for _, cached := range []string{"42", "57"} {
		t.Run(cached, func(t *testing.T) {
			template := seedDeployment()
			template.ResourceVersion = cached
			rb := seedBinding("member1")
			rb.Spec.Resource.ResourceVersion = "42"
			h := newHarness(t, interceptor.Funcs{}, template, rb)
			reads := 0
			h.r.APIReader = countingReader{Reader: h.client, reads: &reads}
			if err := h.reconcile(); err != nil {
				t.Fatal(err)
			}
			if !h.liveWork("member1") {
				t.Fatal("member1 has no Work")
			}
			if reads != 0 {
				t.Errorf("%d live reads of the template, want none: the cache holds the binding's version", reads)
			}
		})
	}
}

func TestCacheHolds(t *testing.T) {
	for _, tc := range []struct {
		cached, want string
		uid          types.UID
		holds        bool
	}{
		{cached: "7", want: "", holds: true},
		{cached: "7", want: "7", holds: true},
		{cached: "8", want: "7", holds: true},
		{cached: "10", want: "9", holds: true},
		{cached: "9", want: "10", holds: false},
		{cached: "opaque-a", want: "opaque-a", holds: true},
		{cached: "opaque-a", want: "opaque-b", holds: false},
		{cached: "7", want: "7", uid: "another-incarnation", holds: false},
	} {
		u := &unstructured.Unstructured{}
		u.SetUID("uid-nginx")
		u.SetResourceVersion(tc.cached)
		ref := workv1alpha2.ObjectReference{UID: tc.uid, ResourceVersion: tc.want}
		if got := cacheHolds(u, ref); got != tc.holds {
			t.Errorf("cacheHolds(cached %q, binding %q, uid %q) = %v, want %v", tc.cached, tc.want, tc.uid, got, tc.holds)
		}
	}
}

type countingReader struct {
	client.Reader
	reads *int
}

func (c countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	*c.reads++
	return c.Reader.Get(ctx, key, obj, opts...)
}

// workImage returns the first container image of cluster's Work manifest.
func workImage(t *testing.T, c client.Client, cluster string) string {
	t.Helper()
	w := &workv1alpha1.Work{}
	if err := c.Get(context.Background(), types.NamespacedName{Namespace: "karmada-es-" + cluster, Name: seedWorkName}, w); err != nil {
		t.Fatalf("cluster %s: %v", cluster, err)
	}
	raw := string(w.Spec.Workload.Manifests[0].Raw)
	i := strings.Index(raw, `"image":"`)
	if i < 0 {
		t.Fatalf("cluster %s: no image in %s", cluster, raw)
	}
	rest := raw[i+len(`"image":"`):]
	return rest[:strings.Index(rest, `"`)]
}
