// SPDX-License-Identifier: Apache-2.0

package bindingcontroller

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// drivenWatcher answers the one-item list with resourceVersion 42 and hands out a watch
// the test drives; it records what the source asked for.
type drivenWatcher struct {
	client.WithWatch
	watcher   *watch.FakeWatcher
	listLimit int64
	watchedRV atomic.Value
}

func (d *drivenWatcher) List(_ context.Context, list client.ObjectList, opts ...client.ListOption) error {
	o := (&client.ListOptions{}).ApplyOptions(opts)
	d.listLimit = o.Limit
	list.SetResourceVersion("42")
	return nil
}

func (d *drivenWatcher) Watch(_ context.Context, _ client.ObjectList, opts ...client.ListOption) (watch.Interface, error) {
	o := (&client.ListOptions{}).ApplyOptions(opts)
	d.watchedRV.Store(o.Raw.ResourceVersion)
	return d.watcher, nil
}

func boundAt(name string, generation, synced int64) *workv1alpha2.ResourceBinding {
	rb := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Generation: generation}}
	if synced > 0 {
		rb.Status.Conditions = []metav1.Condition{{Type: workv1alpha2.ConditionWorksSynced, Status: metav1.ConditionTrue, ObservedGeneration: synced}}
	}
	return rb
}

// Until the bindings are listed, each binding created or changed since the start is queued
// as the watch brings it; the controller's own status writes, which leave a binding synced
// at its generation, are not; and the watch stops once the informer has synced.
func TestChangesWhileTheBindingsAreListedAreQueuedAsTheyCome(t *testing.T) {
	w := &drivenWatcher{watcher: watch.NewFake()}
	var listed atomic.Bool
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	src := changesWhileListing{k: resourceBinding, watcher: w, listed: listed.Load, log: logr.Discard()}
	if err := src.Start(context.Background(), q); err != nil {
		t.Fatal(err)
	}
	w.watcher.Add(boundAt("created", 1, 0))
	w.watcher.Modify(boundAt("status-written", 3, 3))
	w.watcher.Modify(boundAt("changed", 4, 3))
	w.watcher.Delete(boundAt("deleted", 2, 1))
	// The fake watch hands each event over before the next is sent: all four are read.
	var got []string
	for q.Len() > 0 {
		item, _ := q.Get()
		got = append(got, item.Name)
		q.Done(item)
	}
	if want := []string{"created", "changed"}; len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("queued %v, want %v", got, want)
	}
	if w.listLimit != 1 || w.watchedRV.Load() != "42" {
		t.Errorf("listed %d bindings and watched from resourceVersion %v, want 1 and the list's 42", w.listLimit, w.watchedRV.Load())
	}

	listed.Store(true)
	if err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, time.Minute, true,
		func(context.Context) (bool, error) { return w.watcher.IsStopped(), nil }); err != nil {
		t.Fatal("the watch went on after the bindings were listed")
	}
}

// Once the informer has synced, the source watches nothing at all.
func TestNoWatchOnceTheBindingsAreListed(t *testing.T) {
	w := &drivenWatcher{watcher: watch.NewFake()}
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	changesWhileListing{k: resourceBinding, watcher: w, listed: func() bool { return true }, log: logr.Discard()}.run(context.Background(), q)
	if w.watchedRV.Load() != nil {
		t.Error("watched the bindings although they were listed")
	}
}
