// SPDX-License-Identifier: Apache-2.0

package apis_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/binding-controller/binding-controller/internal/testenv/envtestutil"
	"github.com/binding-controller/binding-controller/internal/testenv/suite"
	rolloutsv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/rollouts/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
)

// apiServer is a started envtest control plane and a client for it.
type apiServer struct {
	cfg *rest.Config
	c   client.Client
}

// startAPIServer starts a control plane with the CRDs of crdDir, stopped after the
// enclosing Ordered container.
func startAPIServer(crdDir string) *apiServer {
	plane := suite.StartPlane(suite.PlaneOptions{CRDs: []string{crdDir}})
	return &apiServer{cfg: plane.Config, c: plane.Client}
}

// roundTrip creates the fixture through the typed client (and writes its status through
// the status subresource), then checks that neither the typed read-back nor the stored
// JSON lost anything of it, and that its concrete values are there.
func roundTrip(ctx context.Context, c client.Client, fc fixtureCase) {
	want := fc.New()
	loadTyped(fc.File, want)
	ensureNamespace(ctx, c, want.GetNamespace())

	obj := want.DeepCopyObject().(client.Object)
	Expect(c.Create(ctx, obj)).To(Succeed())
	if fc.HasStatus {
		copyStatus(obj, want)
		Expect(c.Status().Update(ctx, obj)).To(Succeed())
	}

	By("reading it back typed: nothing modelled is lost")
	got := fc.New()
	Expect(c.Get(ctx, client.ObjectKeyFromObject(want), got)).To(Succeed())
	Expect(got.GetUID()).NotTo(BeEmpty())
	fc.Check(Default, got)
	clearServerFields(want)
	clearServerFields(got)
	Expect(got).To(BeComparableTo(want, cmpOptions...))

	By("reading it back unstructured: the stored JSON holds every fixture field")
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(fc.GVK)
	Expect(c.Get(ctx, client.ObjectKeyFromObject(want), u)).To(Succeed())
	stored := plainJSON(u.Object).(map[string]any)
	fixture := loadMap(fc.File)
	for field, v := range fixture {
		if !objectMetaField[field] {
			Expect(subsetDiffs(v, stored[field], "."+field)).To(BeEmpty())
		}
	}
	fixtureMeta := fixture["metadata"].(map[string]any)
	storedMeta := stored["metadata"].(map[string]any)
	for _, field := range []string{"name", "namespace", "labels", "annotations"} {
		if v, ok := fixtureMeta[field]; ok {
			Expect(subsetDiffs(v, storedMeta[field], ".metadata."+field)).To(BeEmpty())
		}
	}
}

// objectMetaField tells the top-level fields every object has from the fields of its kind
// (spec and status, or webhooks for a ResourceInterpreterWebhookConfiguration).
var objectMetaField = map[string]bool{"apiVersion": true, "kind": true, "metadata": true}

// tableColumns fetches the object at path as a meta.k8s.io Table (what kubectl get
// prints) and returns the column names and the cells of its single row.
func tableColumns(cfg *rest.Config, path string) ([]string, []any) {
	httpClient, err := rest.HTTPClientFor(cfg)
	Expect(err).NotTo(HaveOccurred())
	req, err := http.NewRequest(http.MethodGet, strings.TrimSuffix(cfg.Host, "/")+path, nil)
	Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	resp, err := httpClient.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	Expect(err).NotTo(HaveOccurred())
	Expect(resp.StatusCode).To(Equal(http.StatusOK), string(body))
	var table metav1.Table
	Expect(json.Unmarshal(body, &table)).To(Succeed())
	var names []string
	for _, col := range table.ColumnDefinitions {
		names = append(names, col.Name)
	}
	Expect(table.Rows).To(HaveLen(1))
	return names, table.Rows[0].Cells
}

var _ = Describe("The project's CRDs on a real API server", Ordered, func() {
	var s *apiServer
	ctx := context.Background()

	BeforeAll(func() {
		s = startAPIServer(envtestutil.ProjectCRDDir())
	})

	for _, fc := range fixtureCases {
		It("round-trip "+fc.File+" without losing a field", func() {
			roundTrip(ctx, s.c, fc)
		})
	}

	It("print Karmada's binding columns plus WORKS-SYNCED", func() {
		rb := &workv1alpha2.ResourceBinding{}
		loadTyped("resourcebinding.yaml", rb)
		rb.Name = "printer-columns"
		status := rb.Status
		Expect(s.c.Create(ctx, rb)).To(Succeed())
		rb.Status = status
		Expect(s.c.Status().Update(ctx, rb)).To(Succeed())

		names, cells := tableColumns(s.cfg, "/apis/work.karmada.io/v1alpha2/namespaces/default/resourcebindings/printer-columns")
		Expect(names).To(Equal([]string{"Name", "SCHEDULED", "FULLYAPPLIED", "WORKS-SYNCED", "AGE"}))
		Expect(cells[:4]).To(Equal([]any{"printer-columns", "True", "False", "True"}))
	})

	It("print a binding's rollout: revision, stage, phase and cluster counts", func() {
		r := &rolloutsv1alpha1.BindingRollout{}
		loadTyped("bindingrollout.yaml", r)
		r.Name = "printer-columns"
		status := r.Status
		Expect(s.c.Create(ctx, r)).To(Succeed())
		r.Status = status
		Expect(s.c.Status().Update(ctx, r)).To(Succeed())

		names, cells := tableColumns(s.cfg, "/apis/rollouts.binding-controller.io/v1alpha1/namespaces/default/bindingrollouts/printer-columns")
		Expect(names).To(Equal([]string{"Name", "Revision", "Stage", "Phase", "Updated", "Healthy", "Total", "Policy", "Age"}))
		Expect(cells[:8]).To(Equal([]any{"printer-columns", "web-deployment-7d9f8c6b5", "rest", "Progressing", 2.0, 1.0, 3.0, "web"}))
	})

	Describe("a ResourceBinding with fields the Go types do not model", Ordered, func() {
		const name = "nginx-future"
		gvk := workv1alpha2.GroupVersion.WithKind("ResourceBinding")
		key := client.ObjectKey{Namespace: "default", Name: name}
		getStored := func() map[string]any {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(gvk)
			Expect(s.c.Get(ctx, key, u)).To(Succeed())
			return u.Object
		}
		expectUnmodelledFieldsKept := func(obj map[string]any) {
			fixture := loadMap("resourcebinding-unknown-fields.yaml")
			fixtureSpec := fixture["spec"].(map[string]any)
			fixtureStatus := fixture["status"].(map[string]any)
			stored := plainJSON(obj).(map[string]any)
			spec := stored["spec"].(map[string]any)
			status := stored["status"].(map[string]any)
			for _, field := range []string{"unmodelledFeature", "unmodelledList", "unmodelledString"} {
				Expect(spec).To(HaveKeyWithValue(field, fixtureSpec[field]))
			}
			for _, field := range []string{"unmodelledStatus", "unmodelledCounter"} {
				Expect(status).To(HaveKeyWithValue(field, fixtureStatus[field]))
			}
			Expect(nested(obj, "spec", "unmodelledFeature", "mode")).To(Equal("Balanced"))
			Expect(nested(obj, "status", "unmodelledCounter")).To(Equal(int64(42)))
			// Modelled fields are there as well.
			Expect(nested(obj, "spec", "conflictResolution")).To(Equal("Overwrite"))
			Expect(nested(obj, "status", "schedulerObservedGeneration")).To(Equal(int64(1)))
		}

		BeforeAll(func() {
			u := loadUnstructured("resourcebinding-unknown-fields.yaml")
			status := u.Object["status"]
			Expect(s.c.Create(ctx, u)).To(Succeed())
			u.Object["status"] = status
			Expect(s.c.Status().Update(ctx, u)).To(Succeed())
		})

		It("is accepted and keeps those spec and status fields", func() {
			expectUnmodelledFieldsKept(getStored())
		})

		It("prunes unknown fields nested inside modelled objects (only spec and status preserve them)", func() {
			Expect(getStored()).To(HaveKeyWithValue("spec", HaveKeyWithValue("placement",
				Equal(map[string]any{"clusterAffinity": map[string]any{"clusterNames": []any{"member1"}}}))))
		})

		It("keeps them through typed merge patches of metadata, spec and status", func() {
			rb := &workv1alpha2.ResourceBinding{}
			Expect(s.c.Get(ctx, key, rb)).To(Succeed())
			Expect(rb.Spec.ConflictResolution).To(BeEquivalentTo("Overwrite"))

			base := rb.DeepCopy()
			rb.Finalizers = append(rb.Finalizers, workv1alpha2.BindingControllerFinalizer)
			rb.Spec.Replicas = 3
			Expect(s.c.Patch(ctx, rb, client.MergeFrom(base))).To(Succeed())

			base = rb.DeepCopy()
			rb.Status.Conditions = append(rb.Status.Conditions, metav1.Condition{
				Type: workv1alpha2.ConditionWorksSynced, Status: metav1.ConditionTrue, Reason: "WorksSynced",
				Message: "ok", LastTransitionTime: metav1.NewTime(time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)),
			})
			Expect(s.c.Status().Patch(ctx, rb, client.MergeFrom(base))).To(Succeed())

			stored := getStored()
			expectUnmodelledFieldsKept(stored)
			Expect(nested(stored, "metadata", "finalizers")).To(ConsistOf(workv1alpha2.BindingControllerFinalizer))
			Expect(nested(stored, "spec", "replicas")).To(Equal(int64(3)))
			conditions, _, _ := unstructured.NestedSlice(stored, "status", "conditions")
			Expect(conditions).To(ContainElement(HaveKeyWithValue("type", workv1alpha2.ConditionWorksSynced)))
		})

		It("loses them on a typed Update (use patches to write bindings)", func() {
			rb := &workv1alpha2.ResourceBinding{}
			Expect(s.c.Get(ctx, key, rb)).To(Succeed())
			rb.Spec.Replicas = 4
			Expect(s.c.Update(ctx, rb)).To(Succeed())
			stored := getStored()
			Expect(stored["spec"]).NotTo(HaveKey("unmodelledFeature"))
			Expect(nested(stored, "spec", "replicas")).To(Equal(int64(4)))
			// The status subresource was not written, so its unmodelled fields remain.
			Expect(stored["status"]).To(HaveKey("unmodelledStatus"))
		})
	})
})

var _ = Describe("Karmada's own CRDs on a real API server (wire compatibility)", Ordered, func() {
	var s *apiServer
	ctx := context.Background()

	BeforeAll(func() {
		s = startAPIServer(envtestutil.KarmadaCRDDir())
	})

	for _, fc := range fixtureCases {
		if !fc.InKarmadaCRDs {
			continue
		}
		It("round-trip "+fc.File+" written with the project's Go types", func() {
			roundTrip(ctx, s.c, fc)
		})
	}

	It("prune the unmodelled binding fields that the project's CRDs keep", func() {
		u := loadUnstructured("resourcebinding-unknown-fields.yaml")
		Expect(s.c.Create(ctx, u)).To(Succeed())
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(u.GroupVersionKind())
		Expect(s.c.Get(ctx, client.ObjectKeyFromObject(u), got)).To(Succeed())
		Expect(got.Object["spec"]).NotTo(HaveKey("unmodelledFeature"))
		Expect(nested(got.Object, "spec", "conflictResolution")).To(Equal("Overwrite"))
	})

	It("serve the bindings' v1alpha1 version too, converting from the v1alpha2 objects we write", func() {
		rb := &workv1alpha2.ResourceBinding{}
		loadTyped("resourcebinding.yaml", rb)
		rb.Name = "v1alpha1-view"
		Expect(s.c.Create(ctx, rb)).To(Succeed())

		u := &unstructured.Unstructured{}
		u.SetAPIVersion("work.karmada.io/v1alpha1")
		u.SetKind("ResourceBinding")
		Expect(s.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "v1alpha1-view"}, u)).To(Succeed())
		Expect(u.GetAPIVersion()).To(Equal("work.karmada.io/v1alpha1"))
		Expect(nested(u.Object, "spec", "resource", "name")).To(Equal("nginx"))
		clusters, _, err := unstructured.NestedSlice(u.Object, "spec", "clusters")
		Expect(err).NotTo(HaveOccurred())
		Expect(clusters).To(HaveLen(2))
		Expect(clusters[0]).To(HaveKeyWithValue("name", "member1"))
	})
})
