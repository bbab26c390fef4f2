// SPDX-License-Identifier: Apache-2.0

package faults

import (
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/binding-controller/binding-controller/internal/testenv/soaker"
	"github.com/binding-controller/binding-controller/internal/testenv/testkit"
	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
	"github.com/binding-controller/binding-controller/pkg/names"
)

// convergeTimeout is how long the bindings may take to converge once a fault ends.
const convergeTimeout = 60 * time.Second

// noLeader are the flags of a manager that runs alone.
var noLeader = []string{"--leader-elect=false"}

// startManager runs the binary with the suite's kubeconfig and args, its metrics and
// probes on free ports. It is killed at the end of the spec; when the spec failed, its
// log's tail goes to the spec's output.
func startManager(args ...string) *soaker.Manager {
	m, err := soaker.StartManager(soaker.ManagerConfig{Binary: binary, Kubeconfig: kubeconfig, Args: args})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() {
		if CurrentSpecReport().Failed() {
			fmt.Fprintf(GinkgoWriter, "\n----- manager pid %d log (tail) -----\n%s\n", m.PID(), m.LogTail(30000))
		}
		m.Kill()
	})
	return m
}

// startReadyManager starts a manager and waits until its caches have synced.
func startReadyManager(args ...string) *soaker.Manager {
	m := startManager(args...)
	Expect(m.WaitReady(ctx, 60*time.Second)).To(Succeed(), func() string { return m.LogTail(5000) })
	return m
}

// newNamespace creates a namespace for the spec's templates and bindings.
func newNamespace(name string) string {
	Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})).To(Succeed())
	return name
}

// appName is the i-th Deployment of a spec.
func appName(i int) string { return fmt.Sprintf("app-%02d", i) }

// check is one convergence check of namespace ns.
func check(ns string) (*soaker.State, error) {
	return soaker.Check(ctx, k8s, soaker.Scope{Namespaces: []string{ns}})
}

// expectConverged waits until every binding of ns has converged (see soaker.Check) and
// holds the expected number of bindings, then checks it stays so for a second.
func expectConverged(ns string, bindings int) *soaker.State {
	var state *soaker.State
	converged := func(g Gomega) {
		var err error
		state, err = check(ns)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(state.Problems).To(BeEmpty(), state.Summary(20))
		g.Expect(state.Bindings).To(Equal(bindings), "bindings in "+ns)
	}
	Eventually(converged, convergeTimeout, 250*time.Millisecond).Should(Succeed())
	Consistently(converged, time.Second, 250*time.Millisecond).Should(Succeed())
	return state
}

// reconciles reads controller_runtime_reconcile_total of the binding controllers.
func reconciles(m *soaker.Manager) float64 {
	metrics, err := m.Metrics(ctx)
	Expect(err).NotTo(HaveOccurred())
	return soaker.Reconciles(metrics)
}

// quietReconciles waits until m's reconciles stop moving, then returns how many it ran
// in the quiet window of d that follows. A fixed settling time would end, on a busy
// machine, while a sync is still on its way.
func quietReconciles(m *soaker.Manager, d time.Duration) float64 {
	before, err := testkit.Settled(func() float64 { return reconciles(m) }, time.Second, time.Minute)
	Expect(err).NotTo(HaveOccurred())
	time.Sleep(d)
	return reconciles(m) - before
}

// worksOf returns the Works (live or terminating) whose annotations name binding ns/name,
// keyed by cluster.
func worksOf(ns, name string) map[string][]workv1alpha1.Work {
	list := &workv1alpha1.WorkList{}
	Expect(k8s.List(ctx, list)).To(Succeed())
	out := map[string][]workv1alpha1.Work{}
	for _, w := range list.Items {
		if w.Annotations[workv1alpha2.ResourceBindingNamespaceAnnotation] != ns ||
			w.Annotations[workv1alpha2.ResourceBindingNameAnnotation] != name {
			continue
		}
		cluster, _ := names.ClusterOfExecutionNamespace(w.Namespace)
		out[cluster] = append(out[cluster], w)
	}
	return out
}

// describeWorks is worksOf as "cluster:live" / "cluster:terminating" entries, sorted by cluster.
func describeWorks(ns, name string) func() []string {
	return func() []string {
		var out []string
		for cluster, ws := range worksOf(ns, name) {
			for _, w := range ws {
				state := "live"
				if w.DeletionTimestamp != nil {
					state = "terminating"
				}
				out = append(out, cluster+":"+state)
			}
		}
		return out
	}
}

// bindingGone tells whether binding ns/name no longer exists.
func bindingGone(ns, name string) func() bool {
	return func() bool {
		err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &workv1alpha2.ResourceBinding{})
		return apierrors.IsNotFound(err)
	}
}

// worksSynced returns binding ns/name's WorksSynced condition as
// "<status> <reason> gen=<observed>/<generation>: <message>".
func worksSynced(ns, name string) func() string {
	return func() string {
		rb := &workv1alpha2.ResourceBinding{}
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, rb); err != nil {
			return "error: " + err.Error()
		}
		c := meta.FindStatusCondition(rb.Status.Conditions, workv1alpha2.ConditionWorksSynced)
		if c == nil {
			return "none"
		}
		return fmt.Sprintf("%s %s gen=%d/%d: %s", c.Status, c.Reason, c.ObservedGeneration, rb.Generation, c.Message)
	}
}

// writes reads binding_controller_work_writes_total by operation, as "create=3 update=1 …".
func writes(m *soaker.Manager) string {
	metrics, err := m.Metrics(ctx)
	if err != nil {
		return "metrics: " + err.Error()
	}
	var parts []string
	for _, op := range []string{"create", "update", "delete", "unchanged"} {
		parts = append(parts, fmt.Sprintf("%s=%.0f", op, metrics.Sum("binding_controller_work_writes_total",
			map[string]string{"operation": op})))
	}
	return strings.Join(parts, " ")
}

// createRetrying creates Deployment name and its binding to clusters (random ones when
// nil), retrying while the API server refuses; a binding that turns out to exist already
// (its create went through but the answer was lost) counts as created.
func createRetrying(load *soaker.Workload, name string, clusters []string) {
	for {
		err := load.Create(ctx, name, clusters)
		if err == nil || apierrors.IsAlreadyExists(err) || ctx.Err() != nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// createInBackground creates n Deployments and bindings to clusters, one every pace,
// retrying each until it is accepted. created counts them; done is closed at the end.
func createInBackground(load *soaker.Workload, n int, clusters []string, pace time.Duration) (created func() int, done chan struct{}) {
	var count atomic.Int64
	done = make(chan struct{})
	go func() {
		defer GinkgoRecover()
		defer close(done)
		for i := 0; i < n; i++ {
			createRetrying(load, appName(i), clusters)
			count.Add(1)
			time.Sleep(pace)
		}
	}()
	return func() int { return int(count.Load()) }, done
}

func itoa(i int) string { return strconv.Itoa(i) }

func ftoa(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// workCreates reads binding_controller_work_writes_total{operation="create"}.
func workCreates(m *soaker.Manager) float64 {
	metrics, err := m.Metrics(ctx)
	Expect(err).NotTo(HaveOccurred())
	return metrics.Sum("binding_controller_work_writes_total", map[string]string{"operation": "create"})
}

// workersStarted is the log line of the ResourceBinding controller starting its workers:
// from then on it syncs (readiness comes earlier, once the caches have synced).
const workersStarted = `"msg":"Starting workers","controller":"resourcebinding"`

// waitSyncing waits until m's ResourceBinding controller runs its workers.
func waitSyncing(m *soaker.Manager) {
	Eventually(m.Log, 60*time.Second, 20*time.Millisecond).Should(ContainSubstring(workersStarted))
}
