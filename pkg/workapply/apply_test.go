// SPDX-License-Identifier: Apache-2.0

package workapply

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/binding-controller/binding-controller/pkg/apis"
	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
)

func scheme(t *testing.T) *runtime.Scheme {
	s := runtime.NewScheme()
	if err := apis.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

func desiredWork(manifest string) *workv1alpha1.Work {
	return &workv1alpha1.Work{
		ObjectMeta: metav1.ObjectMeta{
			Name: "nginx-687f7fb96f", Namespace: "karmada-es-member1",
			Finalizers: []string{workv1alpha1.ExecutionControllerFinalizer},
			Labels:     map[string]string{workv1alpha2.ResourceBindingPermanentIDLabel: "id-1"},
			Annotations: map[string]string{
				workv1alpha2.ResourceBindingNamespaceAnnotation: "default",
				workv1alpha2.ResourceBindingNameAnnotation:      "nginx-deployment",
			},
		},
		Spec: workv1alpha1.WorkSpec{
			Workload:           workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: []byte(manifest)}}}},
			SuspendDispatching: ptr.To(false), PreserveResourcesOnDeletion: ptr.To(false),
		},
	}
}

// counter counts the requests that reach the (fake) API server, by verb.
type counter map[string]int

func (c counter) funcs(extra interceptor.Funcs) interceptor.Funcs {
	return interceptor.Funcs{
		Get: func(ctx context.Context, cl client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			c["get"]++
			if extra.Get != nil {
				return extra.Get(ctx, cl, key, obj, opts...)
			}
			return cl.Get(ctx, key, obj, opts...)
		},
		Create: func(ctx context.Context, cl client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			c["create"]++
			if extra.Create != nil {
				return extra.Create(ctx, cl, obj, opts...)
			}
			return cl.Create(ctx, obj, opts...)
		},
		Update: func(ctx context.Context, cl client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			c["update"]++
			if extra.Update != nil {
				return extra.Update(ctx, cl, obj, opts...)
			}
			return cl.Update(ctx, obj, opts...)
		},
	}
}

func newApplier(t *testing.T, c counter, extra interceptor.Funcs, objs ...client.Object) (*Applier, client.Client) {
	cl := fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(objs...).WithInterceptorFuncs(c.funcs(extra)).Build()
	return &Applier{Client: cl, Reader: cl}, cl
}

func TestApplyCreatesMissingWork(t *testing.T) {
	c := counter{}
	a, cl := newApplier(t, c, interceptor.Funcs{})
	r := a.Apply(context.Background(), "member1", desiredWork(`{"kind":"Deployment"}`))
	if r.Outcome != Created || r.Err != nil {
		t.Fatalf("got %s %v, want created", r.Outcome, r.Err)
	}
	got := &workv1alpha1.Work{}
	if err := cl.Get(context.Background(), r.Work, got); err != nil {
		t.Fatal(err)
	}
	if c["create"] != 1 || c["update"] != 0 {
		t.Fatalf("requests %v, want exactly one create", c)
	}
}

func TestApplyLeavesUpToDateWorkAlone(t *testing.T) {
	existing := desiredWork(`{"kind":"Deployment","spec":{"a":1,"b":2}}`)
	existing.Labels["someone-else"] = "kept"
	c := counter{}
	a, _ := newApplier(t, c, interceptor.Funcs{}, existing)
	// Same JSON value, other key order: not drift.
	r := a.Apply(context.Background(), "member1", desiredWork(`{"spec":{"b":2,"a":1},"kind":"Deployment"}`))
	if r.Outcome != Unchanged || r.Err != nil {
		t.Fatalf("got %s %v, want unchanged", r.Outcome, r.Err)
	}
	if c["create"]+c["update"] != 0 {
		t.Fatalf("requests %v, want no write", c)
	}
}

func TestApplyUpdatesDriftedWorkKeepingOthersFields(t *testing.T) {
	existing := desiredWork(`{"kind":"Deployment","spec":{"replicas":1}}`)
	existing.Labels["someone-else"] = "kept"
	existing.Finalizers = append(existing.Finalizers, "example.com/other")
	c := counter{}
	a, cl := newApplier(t, c, interceptor.Funcs{}, existing)
	r := a.Apply(context.Background(), "member1", desiredWork(`{"kind":"Deployment","spec":{"replicas":3}}`))
	if r.Outcome != Updated || r.Err != nil {
		t.Fatalf("got %s %v, want updated", r.Outcome, r.Err)
	}
	got := &workv1alpha1.Work{}
	_ = cl.Get(context.Background(), r.Work, got)
	if string(got.Spec.Workload.Manifests[0].Raw) != `{"kind":"Deployment","spec":{"replicas":3}}` {
		t.Fatalf("manifest not updated: %s", got.Spec.Workload.Manifests[0].Raw)
	}
	if got.Labels["someone-else"] != "kept" || len(got.Finalizers) != 2 {
		t.Fatalf("fields others own were dropped: labels %v finalizers %v", got.Labels, got.Finalizers)
	}
}

func TestApplyNeverUpdatesTerminatingWork(t *testing.T) {
	existing := desiredWork(`{"kind":"Deployment"}`)
	existing.DeletionTimestamp = ptr.To(metav1.Now())
	c := counter{}
	a, _ := newApplier(t, c, interceptor.Funcs{}, existing)
	r := a.Apply(context.Background(), "member1", desiredWork(`{"kind":"Deployment","spec":{}}`))
	if r.Outcome != Blocked || !IsBeingDeleted(r.Err) {
		t.Fatalf("got %s %v, want blocked", r.Outcome, r.Err)
	}
	if want := "work karmada-es-member1/nginx-687f7fb96f is being deleted"; r.Err.Error() != want {
		t.Fatalf("error %q, want %q", r.Err, want)
	}
	if c["update"]+c["create"] != 0 {
		t.Fatalf("requests %v, want no write", c)
	}
}

func TestApplyRefusesForeignWork(t *testing.T) {
	foreign := desiredWork(`{"kind":"Deployment"}`)
	foreign.Annotations = nil
	foreign.Labels = nil
	c := counter{}
	a, cl := newApplier(t, c, interceptor.Funcs{}, foreign)
	r := a.Apply(context.Background(), "member1", desiredWork(`{"kind":"Deployment","spec":{}}`))
	var notOwned *NotOwnedError
	if r.Outcome != Failed || !errors.As(r.Err, &notOwned) {
		t.Fatalf("got %s %v, want failed with NotOwnedError", r.Outcome, r.Err)
	}
	if !strings.Contains(r.Err.Error(), "cluster member1") {
		t.Fatalf("error %q does not name the cluster", r.Err)
	}
	got := &workv1alpha1.Work{}
	_ = cl.Get(context.Background(), r.Work, got)
	if string(got.Spec.Workload.Manifests[0].Raw) != `{"kind":"Deployment"}` || c["update"] != 0 {
		t.Fatal("a foreign Work was written")
	}
}

func TestApplyFallsBackToUpdateWhenCacheMissedAnExistingWork(t *testing.T) {
	existing := desiredWork(`{"kind":"Deployment","spec":{"replicas":1}}`)
	c := counter{}
	// The cached reader has not seen the Work yet.
	a, cl := newApplier(t, c, interceptor.Funcs{
		Get: func(ctx context.Context, cl client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if c["get"] == 1 {
				return apierrors.NewNotFound(schema.GroupResource{Group: "work.karmada.io", Resource: "works"}, key.Name)
			}
			return cl.Get(ctx, key, obj, opts...)
		},
	}, existing)
	r := a.Apply(context.Background(), "member1", desiredWork(`{"kind":"Deployment","spec":{"replicas":3}}`))
	if r.Outcome != Updated || r.Err != nil {
		t.Fatalf("got %s %v, want updated", r.Outcome, r.Err)
	}
	got := &workv1alpha1.Work{}
	_ = cl.Get(context.Background(), r.Work, got)
	if string(got.Spec.Workload.Manifests[0].Raw) != `{"kind":"Deployment","spec":{"replicas":3}}` {
		t.Fatalf("manifest not updated: %s", got.Spec.Workload.Manifests[0].Raw)
	}
}

func TestApplyRetriesOnConflict(t *testing.T) {
	existing := desiredWork(`{"kind":"Deployment","spec":{"replicas":1}}`)
	c := counter{}
	a, _ := newApplier(t, c, interceptor.Funcs{
		Update: func(ctx context.Context, cl client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			if c["update"] == 1 {
				return apierrors.NewConflict(schema.GroupResource{Group: "work.karmada.io", Resource: "works"}, obj.GetName(), errors.New("changed"))
			}
			return cl.Update(ctx, obj, opts...)
		},
	}, existing)
	r := a.Apply(context.Background(), "member1", desiredWork(`{"kind":"Deployment","spec":{"replicas":3}}`))
	if r.Outcome != Updated || r.Err != nil || c["update"] != 2 {
		t.Fatalf("got %s %v after %d updates, want updated after 2", r.Outcome, r.Err, c["update"])
	}
}

func TestApplyWrapsRejectedWriteWithClusterAndWork(t *testing.T) {
	c := counter{}
	a, _ := newApplier(t, c, interceptor.Funcs{
		Create: func(ctx context.Context, cl client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			return apierrors.NewForbidden(schema.GroupResource{Group: "work.karmada.io", Resource: "works"}, obj.GetName(), errors.New("denied by policy"))
		},
	})
	r := a.Apply(context.Background(), "member1", desiredWork(`{"kind":"Deployment"}`))
	if r.Outcome != Failed || r.Err == nil {
		t.Fatalf("got %s %v, want failed", r.Outcome, r.Err)
	}
	for _, part := range []string{"cluster member1", "karmada-es-member1/nginx-687f7fb96f", "denied by policy"} {
		if !strings.Contains(r.Err.Error(), part) {
			t.Errorf("error %q lacks %q", r.Err, part)
		}
	}
}

func TestAggregateListsEveryFailureInOrder(t *testing.T) {
	results := []Result{
		{Cluster: "member1", Outcome: Blocked, Err: &BeingDeletedError{Work: client.ObjectKey{Namespace: "karmada-es-member1", Name: "w"}}},
		{Cluster: "member2", Outcome: Created},
		{Cluster: "member3", Outcome: Blocked, Err: &BeingDeletedError{Work: client.ObjectKey{Namespace: "karmada-es-member3", Name: "w"}}},
	}
	want := "[work karmada-es-member1/w is being deleted, work karmada-es-member3/w is being deleted]"
	if got := Aggregate(results).Error(); got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	if Aggregate(results[1:2]) != nil {
		t.Fatal("no failure must aggregate to nil")
	}
}

// liveReads counts reads of whole Works, which only the API server can answer (cached
// reads are of metadata).
func (c counter) liveReadsFuncs() interceptor.Funcs {
	return interceptor.Funcs{Get: func(ctx context.Context, cl client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
		if _, whole := obj.(*workv1alpha1.Work); whole {
			c["live-get"]++
		}
		return cl.Get(ctx, key, obj, opts...)
	}}
}

func TestResyncOfCurrentWorkCostsNoRequest(t *testing.T) {
	c := counter{}
	a, _ := newApplier(t, c, c.liveReadsFuncs())
	a.Ledger = NewLedger()
	desired := desiredWork(`{"kind":"Deployment","spec":{"replicas":2}}`)
	if r := a.Apply(context.Background(), "member1", desired); r.Outcome != Created {
		t.Fatalf("first apply: %s %v", r.Outcome, r.Err)
	}
	before := counter{}
	for k, v := range c {
		before[k] = v
	}
	if r := a.Apply(context.Background(), "member1", desiredWork(`{"kind":"Deployment","spec":{"replicas":2}}`)); r.Outcome != Unchanged {
		t.Fatalf("resync: %s %v", r.Outcome, r.Err)
	}
	if c["live-get"] != before["live-get"] || c["create"] != before["create"] || c["update"] != before["update"] {
		t.Fatalf("a resync of a current Work made requests: before %v after %v", before, c)
	}
	// A different desired content is noticed without the ledger's say-so.
	if r := a.Apply(context.Background(), "member1", desiredWork(`{"kind":"Deployment","spec":{"replicas":5}}`)); r.Outcome != Updated {
		t.Fatalf("changed content: %s %v, want updated", r.Outcome, r.Err)
	}
}

func TestWithoutLedgerEntryTheWorkIsReadOnce(t *testing.T) {
	existing := desiredWork(`{"kind":"Deployment"}`)
	c := counter{}
	a, _ := newApplier(t, c, c.liveReadsFuncs(), existing)
	a.Ledger = NewLedger() // as after a restart
	for i := 0; i < 2; i++ {
		if r := a.Apply(context.Background(), "member1", desiredWork(`{"kind":"Deployment"}`)); r.Outcome != Unchanged {
			t.Fatalf("apply %d: %s %v", i, r.Outcome, r.Err)
		}
	}
	if c["live-get"] != 1 || c["update"] != 0 {
		t.Fatalf("requests %v, want exactly one live read and no write", c)
	}
}

// Before the Work cache has synced, a changed Work costs one read of the whole Work and
// one update: no read of its metadata first, which the update would follow anyway.
func TestUncachedApplyReadsEachWorkOnce(t *testing.T) {
	existing := desiredWork(`{"kind":"Deployment","spec":{"replicas":1}}`)
	terminating := desiredWork(`{"kind":"Deployment"}`)
	terminating.Namespace = "karmada-es-member2"
	terminating.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	c := counter{}
	a, cl := newApplier(t, c, c.liveReadsFuncs(), existing, terminating)
	a.Ledger, a.Uncached = NewLedger(), true

	if r := a.Apply(context.Background(), "member1", desiredWork(`{"kind":"Deployment","spec":{"replicas":2}}`)); r.Outcome != Updated {
		t.Fatalf("changed Work: %s %v, want updated", r.Outcome, r.Err)
	}
	if c["get"] != 1 || c["live-get"] != 1 || c["update"] != 1 {
		t.Fatalf("requests %v, want one read of the whole Work and one update", c)
	}
	got := &workv1alpha1.Work{}
	if err := cl.Get(context.Background(), client.ObjectKeyFromObject(existing), got); err != nil || !strings.Contains(string(got.Spec.Workload.Manifests[0].Raw), `"replicas":2`) {
		t.Fatalf("stored Work %s, %v: want the new manifest", got.Spec.Workload.Manifests, err)
	}

	missing := desiredWork(`{"kind":"Deployment"}`)
	missing.Namespace = "karmada-es-member3"
	if r := a.Apply(context.Background(), "member3", missing); r.Outcome != Created {
		t.Fatalf("missing Work: %s %v, want created", r.Outcome, r.Err)
	}
	blocked := desiredWork(`{"kind":"Deployment","spec":{"replicas":2}}`)
	blocked.Namespace = "karmada-es-member2"
	var gone *BeingDeletedError
	if r := a.Apply(context.Background(), "member2", blocked); r.Outcome != Blocked || !errors.As(r.Err, &gone) {
		t.Fatalf("terminating Work: %s %v, want blocked", r.Outcome, r.Err)
	}
	if c["update"] != 1 {
		t.Fatalf("requests %v: the terminating Work was written", c)
	}
}

func TestOwnedAnnotationsNoLongerDesiredAreRemoved(t *testing.T) {
	existing := desiredWork(`{"kind":"Deployment"}`)
	existing.Annotations["policy.karmada.io/applied-overrides"] = `[{"policyName":"gone"}]`
	existing.Annotations["example.com/keep"] = "yes"
	c := counter{}
	a, cl := newApplier(t, c, interceptor.Funcs{}, existing)
	if r := a.Apply(context.Background(), "member1", desiredWork(`{"kind":"Deployment"}`)); r.Outcome != Updated {
		t.Fatalf("got %s %v, want updated", r.Outcome, r.Err)
	}
	got := &workv1alpha1.Work{}
	_ = cl.Get(context.Background(), client.ObjectKeyFromObject(existing), got)
	if _, stale := got.Annotations["policy.karmada.io/applied-overrides"]; stale || got.Annotations["example.com/keep"] != "yes" {
		t.Fatalf("annotations %v: the stale override record must go and others' annotations stay", got.Annotations)
	}
}

func TestOwnedMetadataChanged(t *testing.T) {
	old := desiredWork(`{}`)
	foreign := old.DeepCopy()
	foreign.Annotations["example.com/touched"] = "1"
	if OwnedMetadataChanged(old, foreign) {
		t.Fatal("another writer's annotation counted as the controller's")
	}
	stripped := old.DeepCopy()
	delete(stripped.Labels, workv1alpha2.ResourceBindingPermanentIDLabel)
	if !OwnedMetadataChanged(old, stripped) {
		t.Fatal("the removal of the permanent-id label went unnoticed")
	}
	unfinalized := old.DeepCopy()
	unfinalized.Finalizers = nil
	if !OwnedMetadataChanged(old, unfinalized) {
		t.Fatal("the removal of the execution finalizer went unnoticed")
	}
	// The execution side lets go of a Work being deleted: its deletion event follows.
	deleting, released := old.DeepCopy(), old.DeepCopy()
	deleting.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	released.DeletionTimestamp, released.Finalizers = deleting.DeletionTimestamp, nil
	if OwnedMetadataChanged(deleting, released) {
		t.Fatal("the release of a terminating Work's finalizer counted as drift")
	}
	other := old.DeepCopy()
	other.Finalizers = append(other.Finalizers, "example.com/other")
	if OwnedMetadataChanged(other, old) {
		t.Fatal("another controller's finalizer counted as the controller's")
	}
}

// metadataWriter stands for an API server that answers Work writes with the Work's
// metadata only (MetadataWriter's answer), behind an admission chain that adds a label.
type metadataWriter struct {
	c      client.Client
	writes int
}

func (w *metadataWriter) admitted(work *workv1alpha1.Work) *workv1alpha1.Work {
	w.writes++
	stored := work.DeepCopy()
	stored.Labels["admission.example.com/added"] = "yes"
	return stored
}

func (w *metadataWriter) Create(ctx context.Context, work *workv1alpha1.Work) (metav1.Object, error) {
	stored := w.admitted(work)
	if err := w.c.Create(ctx, stored); err != nil {
		return nil, err
	}
	return &metav1.PartialObjectMetadata{ObjectMeta: stored.ObjectMeta}, nil
}

func (w *metadataWriter) Update(ctx context.Context, work *workv1alpha1.Work) (metav1.Object, error) {
	stored := w.admitted(work)
	if err := w.c.Update(ctx, stored); err != nil {
		return nil, err
	}
	return &metav1.PartialObjectMetadata{ObjectMeta: stored.ObjectMeta}, nil
}

// What a write answers with is only metadata; the ledger must still vouch for the Work
// it wrote, so that the next sync of the same content costs no request.
func TestApplyVouchesForWorksWrittenWithMetadataAnswers(t *testing.T) {
	c := counter{}
	a, cl := newApplier(t, c, interceptor.Funcs{})
	w := &metadataWriter{c: cl}
	a.Writer, a.Ledger = w, NewLedger()
	ctx := context.Background()
	step := func(name, manifest string, want Outcome, writes int) {
		t.Helper()
		if r := a.Apply(ctx, "member1", desiredWork(manifest)); r.Outcome != want || r.Err != nil {
			t.Fatalf("%s: got %s %v, want %s", name, r.Outcome, r.Err, want)
		}
		if w.writes != writes || c["create"]+c["update"] != writes {
			t.Fatalf("%s: %d writes through the writer, requests %v; want %d writes, all through the writer", name, w.writes, c, writes)
		}
	}
	step("create", `{"kind":"Deployment","spec":{"replicas":1}}`, Created, 1)
	getsBefore := c["get"]
	step("resync after the create", `{"kind":"Deployment","spec":{"replicas":1}}`, Unchanged, 1)
	if c["get"] != getsBefore+1 {
		t.Fatalf("resync read %d times, want the one cached metadata read", c["get"]-getsBefore)
	}
	step("update", `{"kind":"Deployment","spec":{"replicas":3}}`, Updated, 2)
	step("resync after the update", `{"kind":"Deployment","spec":{"replicas":3}}`, Unchanged, 2)

	got := &workv1alpha1.Work{}
	if err := cl.Get(ctx, client.ObjectKeyFromObject(desiredWork("")), got); err != nil {
		t.Fatal(err)
	}
	if string(got.Spec.Workload.Manifests[0].Raw) != `{"kind":"Deployment","spec":{"replicas":3}}` {
		t.Fatalf("stored manifest %s", got.Spec.Workload.Manifests[0].Raw)
	}
}
