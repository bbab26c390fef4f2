// SPDX-License-Identifier: Apache-2.0

package bindingcontroller

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// changesWhileListing is a source that queues the bindings changed after the controller
// started, for as long as the bindings' informer is still making its initial list. That
// list takes 1.5–3 s at 10,000 bindings on two cores, and the informer delivers nothing
// before its end: a change made during a restart waited for it. The changes since the
// start need no list: a watch from the resourceVersion the API server is at when the
// controller starts brings each of them as it is made, and a sync reads a binding from
// the API server until the cache has it (Reconciler.getBinding). Once the informer has
// synced it sees every change itself, and this source stops; whatever it queued is queued
// again by the informer, at most a sync that finds everything current.
type changesWhileListing struct {
	k       bindingAPI
	watcher client.WithWatch
	// listed tells whether the bindings' informer has synced.
	listed func() bool
	log    logr.Logger
}

// listedPoll is how often the source looks whether the informer has synced, to stop.
const listedPoll = 100 * time.Millisecond

func (s changesWhileListing) String() string {
	return fmt.Sprintf("%ss changed while they are listed", s.k.BindingKind)
}

func (s changesWhileListing) Start(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
	go s.run(ctx, q)
	return nil
}

func (s changesWhileListing) run(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	if s.listed() {
		return
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		_ = wait.PollUntilContextCancel(ctx, listedPoll, false, func(context.Context) (bool, error) { return s.listed(), nil })
		stop()
	}()
	log := s.log.WithValues("controllerKind", string(s.k.BindingKind))
	w, err := s.watchFromNow(ctx)
	if err != nil {
		if ctx.Err() == nil {
			log.Error(err, "Not serving changes before the bindings are listed; they wait for the list")
		}
		return
	}
	defer w.Stop()
	queued := 0
	defer func() { log.Info("Served the changes made while the bindings were listed", "queued", queued) }()
	for {
		select {
		case <-ctx.Done():
			return
		case e, ok := <-w.ResultChan():
			if !ok {
				return
			}
			switch e.Type {
			case watch.Added, watch.Modified:
				obj, isObj := e.Object.(client.Object)
				if isObj && s.k.changedSinceSynced(obj) {
					q.Add(reconcile.Request{NamespacedName: client.ObjectKeyFromObject(obj)})
					queued++
				}
			case watch.Error:
				// Most likely the resourceVersion is gone already; the list brings the rest.
				log.Info("The watch of changes before the bindings are listed ended; they wait for the list",
					"error", apierrors.FromObject(e.Object).Error())
				return
			}
		}
	}
}

// watchFromNow watches the bindings from the resourceVersion the API server is at: a list
// of one binding says which (a consistent read), and the watch sends no initial events.
func (s changesWhileListing) watchFromNow(ctx context.Context) (watch.Interface, error) {
	list := s.k.newList()
	if err := s.watcher.List(ctx, list, client.Limit(1)); err != nil {
		return nil, fmt.Errorf("reading the current resourceVersion of %ss: %w", s.k.BindingKind, err)
	}
	rv, err := meta.NewAccessor().ResourceVersion(list)
	if err != nil {
		return nil, err
	}
	w, err := s.watcher.Watch(ctx, s.k.newList(), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: rv}})
	if err != nil {
		return nil, fmt.Errorf("watching %ss from resourceVersion %s: %w", s.k.BindingKind, rv, err)
	}
	return w, nil
}
