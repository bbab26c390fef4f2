// SPDX-License-Identifier: Apache-2.0

package workapply

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
)

// After a restart the ledger is primed from a list: a Work that is as desired is then
// current without a read of its own, even when the API server returns its manifest with
// keys in another order and spaces; one that differs is still read and updated.
func TestPrimedLedgerSparesTheFirstReadOfEachCurrentWork(t *testing.T) {
	current := desiredWork(`{ "spec": {"replicas": 2}, "kind": "Deployment" }`)
	current.Name = "current"
	stale := desiredWork(`{"kind":"Deployment","spec":{"replicas":1}}`)
	stale.Name = "stale"
	terminating := desiredWork(`{"kind":"Deployment"}`)
	terminating.Name, terminating.DeletionTimestamp = "terminating", ptr.To(metav1.Now())
	foreign := desiredWork(`{"kind":"Deployment"}`)
	foreign.Name, foreign.Annotations = "foreign", nil
	c := counter{}
	a, cl := newApplier(t, c, c.liveReadsFuncs(), current, stale, terminating, foreign)
	a.Ledger = NewLedger()

	added, err := a.Ledger.Prime(context.Background(), cl)
	if err != nil {
		t.Fatal(err)
	}
	if added != 2 {
		t.Fatalf("primed %d Works, want 2: neither the terminating nor the foreign one", added)
	}
	want := func(name, manifest string) *workv1alpha1.Work {
		w := desiredWork(manifest)
		w.Name = name
		return w
	}
	if r := a.Apply(context.Background(), "member1", want("current", `{"kind":"Deployment","spec":{"replicas":2}}`)); r.Outcome != Unchanged {
		t.Fatalf("current Work: %s %v", r.Outcome, r.Err)
	}
	if c["live-get"] != 0 || c["update"] != 0 {
		t.Fatalf("requests %v for a Work the primed ledger vouches for, want none", c)
	}
	if r := a.Apply(context.Background(), "member1", want("stale", `{"kind":"Deployment","spec":{"replicas":3}}`)); r.Outcome != Updated {
		t.Fatalf("stale Work: %s %v, want updated", r.Outcome, r.Err)
	}
	if c["live-get"] != 1 {
		t.Fatalf("requests %v, want the stale Work read once", c)
	}
}

func TestPrimeReadsEveryPage(t *testing.T) {
	var objs []client.Object
	for i := 0; i < primePageSize*2+7; i++ {
		w := desiredWork(`{"kind":"Deployment"}`)
		w.Name = fmt.Sprintf("work-%04d", i)
		objs = append(objs, w)
	}
	pages := 0
	cl := fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(objs...).WithInterceptorFuncs(interceptor.Funcs{
		// The fake client does not page: serve Limit and Continue (an offset) here.
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			o := (&client.ListOptions{}).ApplyOptions(opts)
			if err := c.List(ctx, list); err != nil {
				return err
			}
			works := list.(*workv1alpha1.WorkList)
			from, _ := strconv.Atoi(o.Continue)
			to := min(from+int(o.Limit), len(works.Items))
			works.Items = works.Items[from:to]
			works.Continue = ""
			if to < len(objs) {
				works.Continue = strconv.Itoa(to)
			}
			pages++
			return nil
		},
	}).Build()
	l := NewLedger()
	added, err := l.Prime(context.Background(), cl)
	if err != nil || added != len(objs) || l.Len() != len(objs) || pages != 3 {
		t.Fatalf("primed %d (ledger %d) in %d pages, err %v; want %d in 3", added, l.Len(), pages, err, len(objs))
	}
}
