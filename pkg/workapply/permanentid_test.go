// SPDX-License-Identifier: Apache-2.0

package workapply

import (
	"context"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
)

// A rendered manifest, and the same manifest as Karmada's Work webhook stores it in a
// Work whose permanent ID is "id-w": labelled with the ID, managed labels recorded again,
// keys in the API server's order.
const (
	renderedManifest = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"annotations":{` +
		`"resourcetemplate.karmada.io/managed-annotations":"resourcetemplate.karmada.io/managed-annotations,resourcetemplate.karmada.io/managed-labels",` +
		`"resourcetemplate.karmada.io/managed-labels":"app"},"labels":{"app":"web"},"name":"web"},"spec":{"replicas":2}}`
	admittedManifest = `{"kind":"Deployment","apiVersion":"apps/v1","spec":{"replicas":2},"metadata":{"name":"web",` +
		`"labels":{"work.karmada.io/permanent-id":"id-w","app":"web"},"annotations":{` +
		`"resourcetemplate.karmada.io/managed-labels":"app,work.karmada.io/permanent-id",` +
		`"resourcetemplate.karmada.io/managed-annotations":"resourcetemplate.karmada.io/managed-annotations,resourcetemplate.karmada.io/managed-labels"}}}`
)

func admittedWork() *workv1alpha1.Work {
	w := desiredWork(admittedManifest)
	w.Labels[workv1alpha2.WorkPermanentIDLabel] = "id-w"
	return w
}

// After a restart behind Karmada's Work webhook, the primed ledger vouches for every
// unchanged Work: no read of its own, no rewrite.
func TestBehindTheWorkWebhookARestartRewritesNothing(t *testing.T) {
	c := counter{}
	a, cl := newApplier(t, c, c.liveReadsFuncs(), admittedWork())
	a.Ledger = NewLedger()
	if _, err := a.Ledger.Prime(context.Background(), cl); err != nil {
		t.Fatal(err)
	}
	if r := a.Apply(context.Background(), "member1", desiredWork(renderedManifest)); r.Outcome != Unchanged {
		t.Fatalf("unchanged Work behind the webhook: %s %v, want unchanged", r.Outcome, r.Err)
	}
	if c["live-get"] != 0 || c["update"] != 0 {
		t.Fatalf("requests %v for an unchanged Work the primed ledger holds, want none", c)
	}
}

// Without a ledger entry the Work is read once, found current and not written; the next
// sync costs nothing.
func TestBehindTheWorkWebhookAnUnchangedWorkIsNotRewritten(t *testing.T) {
	c := counter{}
	a, _ := newApplier(t, c, c.liveReadsFuncs(), admittedWork())
	a.Ledger = NewLedger()
	for i := 0; i < 2; i++ {
		if r := a.Apply(context.Background(), "member1", desiredWork(renderedManifest)); r.Outcome != Unchanged {
			t.Fatalf("sync %d: %s %v, want unchanged", i, r.Outcome, r.Err)
		}
	}
	if c["live-get"] != 1 || c["update"] != 0 {
		t.Fatalf("requests %v, want one read and no update", c)
	}
}

// A changed template still rewrites the Work, and the Work keeps its permanent ID in its
// labels and its manifest.
func TestBehindTheWorkWebhookAChangeIsWrittenWithThePermanentID(t *testing.T) {
	c := counter{}
	a, cl := newApplier(t, c, c.liveReadsFuncs(), admittedWork())
	a.Ledger = NewLedger()
	changed := desiredWork(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"annotations":{` +
		`"resourcetemplate.karmada.io/managed-annotations":"resourcetemplate.karmada.io/managed-annotations,resourcetemplate.karmada.io/managed-labels",` +
		`"resourcetemplate.karmada.io/managed-labels":"app"},"labels":{"app":"web"},"name":"web"},"spec":{"replicas":5}}`)
	if r := a.Apply(context.Background(), "member1", changed); r.Outcome != Updated {
		t.Fatalf("changed template: %s %v, want updated", r.Outcome, r.Err)
	}
	reads := c["live-get"]
	got := &workv1alpha1.Work{}
	if err := cl.Get(context.Background(), client.ObjectKeyFromObject(changed), got); err != nil {
		t.Fatal(err)
	}
	c["live-get"] = reads
	want := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"annotations":{` +
		`"resourcetemplate.karmada.io/managed-annotations":"resourcetemplate.karmada.io/managed-annotations,resourcetemplate.karmada.io/managed-labels",` +
		`"resourcetemplate.karmada.io/managed-labels":"app,work.karmada.io/permanent-id"},"labels":{"app":"web","work.karmada.io/permanent-id":"id-w"},"name":"web"},"spec":{"replicas":5}}`
	if string(got.Spec.Workload.Manifests[0].Raw) != want || got.Labels[workv1alpha2.WorkPermanentIDLabel] != "id-w" {
		t.Fatalf("written Work: labels %v manifest\n%s\nwant manifest\n%s", got.Labels, got.Spec.Workload.Manifests[0].Raw, want)
	}
	// Written once: the next sync is vouched for by the ledger.
	if r := a.Apply(context.Background(), "member1", changed); r.Outcome != Unchanged || c["update"] != 1 || c["live-get"] != 1 {
		t.Fatalf("next sync: %s %v, requests %v; want unchanged after one read and one update", r.Outcome, r.Err, c)
	}
}

// A Work the webhook gave its ID on creation is vouched for at the next sync: the ledger
// remembers the content as admitted, not as sent.
func TestACreatedWorkGivenAPermanentIDIsCurrentAtTheNextSync(t *testing.T) {
	c := counter{}
	a, _ := newApplier(t, c, interceptor.Funcs{
		Create: func(ctx context.Context, cl client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			w := obj.(*workv1alpha1.Work)
			admitted := asAdmitted(w, map[string]string{workv1alpha2.WorkPermanentIDLabel: "id-new"})
			admitted.DeepCopyInto(w)
			return cl.Create(ctx, w, opts...)
		},
		Get: c.liveReadsFuncs().Get,
	})
	a.Ledger = NewLedger()
	if r := a.Apply(context.Background(), "member1", desiredWork(renderedManifest)); r.Outcome != Created {
		t.Fatalf("first sync: %s %v", r.Outcome, r.Err)
	}
	if r := a.Apply(context.Background(), "member1", desiredWork(renderedManifest)); r.Outcome != Unchanged {
		t.Fatalf("next sync: %s %v", r.Outcome, r.Err)
	}
	if c["live-get"] != 0 || c["update"] != 0 {
		t.Fatalf("requests %v after the create, want none", c)
	}
}

// A Work whose propagation is suppressed keeps its manifests as they are: the webhook
// leaves them alone, so the comparison does too.
func TestASuppressedWorkKeepsItsManifestsAsRendered(t *testing.T) {
	desired := desiredWork(renderedManifest)
	labels := map[string]string{
		workv1alpha2.WorkPermanentIDLabel:        "id-w",
		workv1alpha1.PropagationInstructionLabel: workv1alpha1.PropagationInstructionSuppressed,
	}
	got := asAdmitted(desired, labels)
	if string(got.Spec.Workload.Manifests[0].Raw) != renderedManifest || got.Labels[workv1alpha2.WorkPermanentIDLabel] != "id-w" {
		t.Fatalf("suppressed: labels %v manifest %s", got.Labels, got.Spec.Workload.Manifests[0].Raw)
	}
	if asAdmitted(desired, map[string]string{"other": "x"}) != desired {
		t.Fatal("a Work without a permanent ID must be compared as rendered")
	}
	if _, has := desired.Labels[workv1alpha2.WorkPermanentIDLabel]; has {
		t.Fatal("desired was modified")
	}
}
