// SPDX-License-Identifier: Apache-2.0

package workapply

import (
	"context"
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// A Work recreated under the same name is another Work: when the delete of the old one
// finds it gone (its UID precondition fails, or the name is not found), the ledger keeps
// what it knows of the new one, so its resync still costs no request.
func TestDeleteOfAnOldWorkKeepsTheLedgerEntryOfItsSuccessor(t *testing.T) {
	gr := schema.GroupResource{Group: "work.karmada.io", Resource: "works"}
	for name, refusal := range map[string]error{
		"uid precondition failed": apierrors.NewConflict(gr, "nginx-687f7fb96f", errors.New("Precondition failed: UID in precondition: uid-1, UID in object meta: uid-2")),
		"not found":               apierrors.NewNotFound(gr, "nginx-687f7fb96f"),
	} {
		t.Run(name, func(t *testing.T) {
			successor := desiredWork(`{"kind":"Deployment"}`)
			successor.UID = "uid-2"
			c := counter{}
			funcs := c.funcs(c.liveReadsFuncs())
			funcs.Delete = func(ctx context.Context, cl client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
				c["delete"]++
				return refusal
			}
			cl := fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(successor).WithInterceptorFuncs(funcs).Build()
			a := &Applier{Client: cl, Reader: cl, Ledger: NewLedger()}
			if r := a.Apply(context.Background(), "member1", desiredWork(`{"kind":"Deployment"}`)); r.Outcome != Unchanged {
				t.Fatalf("apply: %s %v", r.Outcome, r.Err)
			}
			key := client.ObjectKeyFromObject(successor)
			if !a.Ledger.Wrote(key, "uid-2") {
				t.Fatal("the ledger does not vouch for the Work it found current")
			}

			old := WorkMetadata()
			old.Namespace, old.Name, old.UID = key.Namespace, key.Name, "uid-1"
			if r := a.Delete(context.Background(), "member1", old); r.Outcome != Unchanged || r.Err != nil {
				t.Fatalf("delete of the old Work: %s %v, want unchanged", r.Outcome, r.Err)
			}
			if c["delete"] != 1 {
				t.Fatalf("requests %v, want one delete", c)
			}
			if !a.Ledger.Wrote(key, "uid-2") {
				t.Fatal("the delete of uid-1 dropped the ledger entry of uid-2")
			}
			if !a.Ledger.Deleted("uid-1") || a.Ledger.Deleted("uid-2") {
				t.Fatal("the ledger must know uid-1 is gone, and only uid-1")
			}
			reads := c["live-get"]
			if r := a.Apply(context.Background(), "member1", desiredWork(`{"kind":"Deployment"}`)); r.Outcome != Unchanged {
				t.Fatalf("resync: %s %v", r.Outcome, r.Err)
			}
			if c["live-get"] != reads || c["update"] != 0 {
				t.Fatalf("the resync of the successor made requests: %v", c)
			}
		})
	}
}
