// SPDX-License-Identifier: Apache-2.0

// Package bindingcontroller turns ResourceBindings and ClusterResourceBindings into one
// Work per target cluster. Every cluster is synced on its own: a cluster that fails is
// reported and retried while the others keep their Works.
package bindingcontroller

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/binding-controller/binding-controller/pkg/cacheable"
	"github.com/binding-controller/binding-controller/pkg/interpreter"
	"github.com/binding-controller/binding-controller/pkg/recent"
	"github.com/binding-controller/binding-controller/pkg/render"
	"github.com/binding-controller/binding-controller/pkg/workapply"
)

// +kubebuilder:rbac:groups=work.karmada.io,resources=resourcebindings;clusterresourcebindings,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=work.karmada.io,resources=works,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups=*,resources=*,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch

// Reconciler syncs one kind of binding to its Works.
type Reconciler struct {
	// Client reads from the informer cache and writes to the API server.
	Client client.Client
	// APIReader reads from the API server itself, for the rare reads the cache cannot answer.
	APIReader client.Reader
	// Recorder records core/v1 events, as Karmada's controllers do, under the name of
	// Karmada's controller for this kind of binding (bindingAPI.eventComponent).
	Recorder record.EventRecorder
	// Kind is the kind of binding this reconciler serves.
	Kind render.BindingKind
	// ClusterSyncConcurrency, BlockedWorkRecheckInterval, StuckWorkWarningAfter: see
	// Options; zero takes the default.
	ClusterSyncConcurrency     int
	BlockedWorkRecheckInterval time.Duration
	StuckWorkWarningAfter      time.Duration

	// Served says which optional inputs the API server serves.
	Served ServedAPIs
	// Interpreter revises replicas of kinds with interpreter hooks; nil: one with the
	// bundled customizations only.
	Interpreter *interpreter.Interpreter

	// Ledger remembers what was written, so a resync of current Works costs no request.
	Ledger *workapply.Ledger
	// WorkWriter creates and updates Works; nil writes them through Client.
	WorkWriter workapply.Writer
	// TemplateKinds refuses template kinds the cache could never list; nil trusts every kind.
	TemplateKinds *cacheable.Kinds

	deletionWaits *deletionWaits
	stuck         *stuckWarnings
	// watchesWorks: a Work's deletion requeues its binding. Set by setupWithManager.
	watchesWorks bool
	// queue is the controller's queue, set once it starts (queueReady closed); nil when
	// Reconcile is called directly.
	queue      *bindingQueue
	queueReady chan struct{}
	// parking holds the re-verifications that came up before the ledger was primed.
	parking *primingParking
	// released are the bindings whose finalizer this process let go. The cache may still
	// show such a binding alive for a moment after it is gone, and a sync of that stale
	// copy would write Works nobody will ever delete.
	released *recent.UIDs
}

// releasedMemory is how long a released binding is remembered: far longer than any cache lag.
const releasedMemory = 10 * time.Minute

// NewReconciler returns a Reconciler for kind with the given settings; zero settings
// take their defaults (DefaultOptions).
func NewReconciler(r Reconciler) *Reconciler {
	d := DefaultOptions()
	if r.ClusterSyncConcurrency <= 0 {
		r.ClusterSyncConcurrency = d.ClusterSyncConcurrency
	}
	if r.BlockedWorkRecheckInterval <= 0 {
		r.BlockedWorkRecheckInterval = d.BlockedWorkRecheckInterval
	}
	if r.StuckWorkWarningAfter <= 0 {
		r.StuckWorkWarningAfter = d.StuckWorkWarningAfter
	}
	if r.deletionWaits == nil {
		r.deletionWaits = newDeletionWaits()
	}
	if r.Ledger == nil {
		r.Ledger = workapply.NewLedger()
	}
	if r.Interpreter == nil {
		r.Interpreter = interpreter.New(interpreter.Options{})
	}
	r.watchesWorks = true
	r.released = recent.NewUIDs(releasedMemory)
	r.stuck = newStuckWarnings()
	r.queueReady = make(chan struct{})
	r.parking = &primingParking{}
	return &r
}

// Reconcile only fetches and dispatches; the phases live in sync.go and delete.go.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	if ready, err := r.awaitPriming(ctx, req); !ready {
		return ctrl.Result{}, err
	}
	k := bindingAPIOf(r.Kind)
	obj := k.newObject()
	if err := r.Client.Get(ctx, req.NamespacedName, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return r.reconcileGone(ctx, k, req.NamespacedName)
		}
		return ctrl.Result{}, err
	}
	if r.released.Has(obj.GetUID()) {
		// A stale cached copy of a binding this process already let go.
		return ctrl.Result{}, nil
	}
	s := newScope(k, obj)
	ctx = ctrl.LoggerInto(ctx, ctrl.LoggerFrom(ctx).WithValues("binding", klog.KObj(obj)))
	if !obj.GetDeletionTimestamp().IsZero() {
		return r.reconcileDelete(ctx, s)
	}
	return r.reconcile(ctx, s)
}

func (r *Reconciler) applier() *workapply.Applier {
	return &workapply.Applier{Client: r.Client, Reader: r.APIReader, Ledger: r.Ledger, Writer: r.WorkWriter}
}
