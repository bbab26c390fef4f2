// SPDX-License-Identifier: Apache-2.0

package bindingcontroller

import (
	"context"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
	"github.com/binding-controller/binding-controller/pkg/ledgercheckpoint"
	"github.com/binding-controller/binding-controller/pkg/workapply"
)

// syncedCache is a cache that has synced, read through a client.
type syncedCache struct {
	cache.Cache
	reader client.Reader
}

func (c syncedCache) WaitForCacheSync(context.Context) bool { return true }
func (c syncedCache) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return c.reader.List(ctx, list, opts...)
}

// runCheckpointer runs a checkpointer until until() holds, then stops it as the manager
// does on shutdown, and waits for it to return.
func runCheckpointer(t *testing.T, c *ledgerCheckpointer, until func() bool) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Start(ctx) }()
	deadline := time.Now().Add(10 * time.Second)
	for !until() {
		if time.Now().After(deadline) {
			cancel()
			t.Fatal("the checkpointer never got there")
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// The leader saves its ledger on shutdown, even when it never ticked; a replica that
// takes the lead afterwards trusts the Works from that save and reads none of them; and
// a leader whose ledger did not change writes nothing.
func TestTheLedgerSavedOnShutdownSparesTheNextLeaderItsReads(t *testing.T) {
	reads, writes := 0, 0
	h := newHarness(t, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			if obj.GetUID() == "" {
				obj.SetUID(types.UID(uuid.NewString())) // the API server assigns one
			}
			if _, ok := obj.(*corev1.ConfigMap); ok {
				writes++
			}
			return c.Create(ctx, obj, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			if _, ok := obj.(*corev1.ConfigMap); ok {
				writes++
			}
			return c.Update(ctx, obj, opts...)
		},
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if _, whole := obj.(*workv1alpha1.Work); whole {
				reads++
			}
			return c.Get(ctx, key, obj, opts...)
		},
	}, seedDeployment(), seedBinding("member1", "member2"))
	checkpointer := func(ledger *workapply.Ledger) *ledgerCheckpointer {
		return &ledgerCheckpointer{
			store:  &ledgercheckpoint.Store{Reader: h.client, Writer: h.client, Namespace: "karmada-system", Name: "binding-controller-manager-work-ledger"},
			ledger: ledger, cache: syncedCache{reader: h.client}, interval: time.Hour, log: testr.New(t),
		}
	}

	leader := workapply.NewLedger()
	h.r.Ledger = leader
	if err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	first := checkpointer(leader)
	runCheckpointer(t, first, func() bool { return !first.store.LoadedAt().IsZero() })
	if writes == 0 {
		t.Fatal("the leader saved no checkpoint on shutdown")
	}

	next := workapply.NewLedger()
	runCheckpointer(t, checkpointer(next), func() bool { return next.Len() == 2 })
	h.r.Ledger, reads, writes = next, 0, 0
	if err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	if reads != 0 {
		t.Fatalf("the next leader read %d Works the checkpoint vouched for, want none", reads)
	}
	again := checkpointer(next)
	runCheckpointer(t, again, func() bool { return !again.store.LoadedAt().IsZero() })
	if writes != 0 {
		t.Fatalf("a leader whose ledger holds what the checkpoint holds wrote %d ConfigMaps, want none", writes)
	}
}
