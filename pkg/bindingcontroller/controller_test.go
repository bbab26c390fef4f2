// SPDX-License-Identifier: Apache-2.0

package bindingcontroller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/binding-controller/binding-controller/pkg/apis"
	clusterv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/cluster/v1alpha1"
	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
	"github.com/binding-controller/binding-controller/pkg/render"
	"github.com/binding-controller/binding-controller/pkg/workapply"
	"github.com/go-logr/logr/funcr"
	"github.com/prometheus/client_golang/prometheus/testutil"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/event"
)

const seedWorkName = "nginx-687f7fb96f"

func testScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := apis.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

func seedDeployment() *appsv1.Deployment {
	return &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: "nginx", Namespace: "default", UID: "uid-nginx"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](3),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "nginx"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "nginx"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx"}}},
			},
		},
	}
}

func seedBinding(clusters ...string) *workv1alpha2.ResourceBinding {
	rb := &workv1alpha2.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "nginx-deployment", Namespace: "default",
			Labels: map[string]string{workv1alpha2.ResourceBindingPermanentIDLabel: "id-new"}},
		Spec: workv1alpha2.ResourceBindingSpec{
			Resource: workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "nginx"},
			Replicas: 3,
		},
	}
	for _, c := range clusters {
		rb.Spec.Clusters = append(rb.Spec.Clusters, workv1alpha2.TargetCluster{Name: c, Replicas: 1})
	}
	return rb
}

// terminatingWork is an old Work whose execution side still holds it.
func terminatingWork(cluster string) *workv1alpha1.Work {
	return &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{
		Name: seedWorkName, Namespace: "karmada-es-" + cluster,
		Finalizers:        []string{workv1alpha1.ExecutionControllerFinalizer},
		DeletionTimestamp: ptr.To(metav1.Now()),
		Labels:            map[string]string{workv1alpha2.ResourceBindingPermanentIDLabel: "id-old"},
		Annotations: map[string]string{
			workv1alpha2.ResourceBindingNamespaceAnnotation: "default",
			workv1alpha2.ResourceBindingNameAnnotation:      "nginx-deployment",
		},
	}}
}

type harness struct {
	t        *testing.T
	client   client.Client
	recorder *record.FakeRecorder
	r        *Reconciler
}

func newHarness(t *testing.T, funcs interceptor.Funcs, objs ...client.Object) *harness {
	t.Helper()
	s := testScheme(t)
	mapper := meta.NewDefaultRESTMapper(nil)
	mapper.Add(appsv1.SchemeGroupVersion.WithKind("Deployment"), meta.RESTScopeNamespace)
	mapper.Add(rbacv1.SchemeGroupVersion.WithKind("ClusterRole"), meta.RESTScopeRoot)
	cl := fake.NewClientBuilder().WithScheme(s).WithRESTMapper(mapper).
		WithObjects(objs...).
		WithStatusSubresource(&workv1alpha2.ResourceBinding{}, &workv1alpha2.ClusterResourceBinding{}).
		WithIndex(workapply.WorkMetadata(), workByBindingIndex, indexWorkByBinding).
		WithInterceptorFuncs(funcs).Build()
	rec := record.NewFakeRecorder(100)
	return &harness{t: t, client: cl, recorder: rec, r: NewReconciler(Config{
		Client: cl, APIReader: cl, Recorder: rec, Kind: render.ResourceBindingKind, ClusterSyncConcurrency: 4,
	})}
}

func (h *harness) reconcile() error {
	_, err := h.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "default", Name: "nginx-deployment"}})
	return err
}

// liveWork reports whether cluster holds a Work that is not being deleted.
func (h *harness) liveWork(cluster string) bool {
	w := &workv1alpha1.Work{}
	err := h.client.Get(context.Background(), types.NamespacedName{Namespace: "karmada-es-" + cluster, Name: seedWorkName}, w)
	return err == nil && w.DeletionTimestamp == nil
}

func (h *harness) worksSynced() *metav1.Condition {
	rb := &workv1alpha2.ResourceBinding{}
	if err := h.client.Get(context.Background(), types.NamespacedName{Namespace: "default", Name: "nginx-deployment"}, rb); err != nil {
		h.t.Fatal(err)
	}
	return meta.FindStatusCondition(rb.Status.Conditions, workv1alpha2.ConditionWorksSynced)
}

func (h *harness) events() []string {
	var out []string
	for {
		select {
		case e := <-h.recorder.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func rejectCreatesIn(namespace string, err error) interceptor.Funcs {
	return interceptor.Funcs{Create: func(ctx context.Context, cl client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
		if obj.GetNamespace() == namespace {
			return err
		}
		return cl.Create(ctx, obj, opts...)
	}}
}

var worksGR = schema.GroupResource{Group: "work.karmada.io", Resource: "works"}

// Each per-cluster failure leaves the other clusters' Works written and names its cluster.
func TestOneFailingClusterNeverBlocksTheOthers(t *testing.T) {
	cases := []struct {
		name     string
		funcs    interceptor.Funcs
		objs     []client.Object
		clusters []string
		failing  []string
		wantErr  string
		reason   string // of the failing clusters, as the failure counter labels it
		// condition is the WorksSynced message; blocked-only syncs wait for the Work's
		// deletion instead of returning an error.
		condition string
	}{
		{
			name: "terminating work", objs: []client.Object{terminatingWork("member1")},
			clusters: []string{"member1", "member2", "member3"}, failing: []string{"member1"},
			wantErr: "work karmada-es-member1/nginx-687f7fb96f is being deleted", reason: "WorkBeingDeleted",
			condition: "2/3 clusters synced; member1: work karmada-es-member1/nginx-687f7fb96f is being deleted",
		},
		{
			name: "two terminating works", objs: []client.Object{terminatingWork("member1"), terminatingWork("member2")},
			clusters: []string{"member1", "member2", "member3"}, failing: []string{"member1", "member2"},
			wantErr: "[work karmada-es-member1/nginx-687f7fb96f is being deleted, work karmada-es-member2/nginx-687f7fb96f is being deleted]",
			reason:  "WorkBeingDeleted",
			condition: "1/3 clusters synced; member1: work karmada-es-member1/nginx-687f7fb96f is being deleted; " +
				"member2: work karmada-es-member2/nginx-687f7fb96f is being deleted",
		},
		{
			name:     "missing execution namespace",
			funcs:    rejectCreatesIn("karmada-es-member2", apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, "karmada-es-member2")),
			clusters: []string{"member1", "member2", "member3"}, failing: []string{"member2"},
			wantErr:   `cluster member2: work karmada-es-member2/nginx-687f7fb96f: creating: namespaces "karmada-es-member2" not found`,
			reason:    "NotFound",
			condition: `2/3 clusters synced; member2: work karmada-es-member2/nginx-687f7fb96f: creating: namespaces "karmada-es-member2" not found`,
		},
		{
			name:     "write rejected by the API server",
			funcs:    rejectCreatesIn("karmada-es-member3", apierrors.NewForbidden(worksGR, seedWorkName, errors.New("denied by admission policy"))),
			clusters: []string{"member1", "member2", "member3"}, failing: []string{"member3"},
			wantErr: "cluster member3: work karmada-es-member3/nginx-687f7fb96f: creating: ", reason: "Forbidden",
			condition: "2/3 clusters synced; member3: work karmada-es-member3/nginx-687f7fb96f: creating: ",
		},
		{
			name:     "work too large for etcd in one cluster",
			funcs:    rejectCreatesIn("karmada-es-member2", apierrors.NewInternalError(errors.New("etcdserver: request is too large"))),
			clusters: []string{"member1", "member2", "member3"}, failing: []string{"member2"},
			wantErr:   "cluster member2: work karmada-es-member2/nginx-687f7fb96f: creating: Internal error occurred: etcdserver: request is too large (the Work is 0.00 MiB as JSON",
			reason:    "WorkTooLarge",
			condition: "2/3 clusters synced; member2: work karmada-es-member2/nginx-687f7fb96f: creating: Internal error occurred: etcdserver: request is too large",
		},
		{
			name:     "panic in one cluster's apply",
			funcs:    panicOnCreateIn("karmada-es-member2"),
			clusters: []string{"member1", "member2", "member3"}, failing: []string{"member2"},
			wantErr:   "cluster member2: panic while syncing work karmada-es-member2/nginx-687f7fb96f: injected fault",
			reason:    "Panic",
			condition: "2/3 clusters synced; member2: panic while syncing work karmada-es-member2/nginx-687f7fb96f: injected fault",
		},
		{
			name:     "render error for one cluster",
			clusters: []string{"member1", "Bad_Cluster", "member3"}, failing: []string{"Bad_Cluster"},
			wantErr:   `cluster Bad_Cluster: rendering work: cluster name "Bad_Cluster" does not form a valid execution namespace`,
			reason:    "RenderFailed",
			condition: `2/3 clusters synced; Bad_Cluster: rendering work: cluster name "Bad_Cluster"`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			objs := append([]client.Object{seedDeployment(), seedBinding(tc.clusters...)}, tc.objs...)
			h := newHarness(t, tc.funcs, objs...)
			failuresBefore := map[string]float64{}
			for _, f := range tc.failing {
				failuresBefore[f] = testutil.ToFloat64(clusterSyncFailures.WithLabelValues(clusterLabel(f), tc.reason))
			}
			res, err := h.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "default", Name: "nginx-deployment"}})
			switch tc.reason {
			case "WorkBeingDeleted":
				if err != nil || res.RequeueAfter != 30*time.Second {
					t.Fatalf("Reconcile = %v, %v; a binding blocked only by terminating Works must wait for them, with a 30s recheck", res, err)
				}
				err = errors.New(strings.Join(h.events(), "\n"))
			case "RenderFailed", "WorkTooLarge":
				if !isParked(res, err) {
					t.Fatalf("Reconcile = %v, %v; input that cannot succeed must be parked until the binding changes, not retried", res, err)
				}
				err = errors.New(strings.Join(h.events(), "\n"))
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Reconcile error = %v, want one containing %q", err, tc.wantErr)
			}
			cond := h.worksSynced()
			if cond == nil || cond.Status != metav1.ConditionFalse || !strings.HasPrefix(cond.Message, tc.condition) {
				t.Errorf("WorksSynced = %+v, want False with message starting %q", cond, tc.condition)
			}
			for _, c := range tc.clusters {
				failing := false
				for _, f := range tc.failing {
					failing = failing || f == c
				}
				if got := h.liveWork(c); got == failing {
					t.Errorf("cluster %s: live work = %v, want %v", c, got, !failing)
				}
				if failing && !strings.Contains(err.Error(), c) {
					t.Errorf("error %q does not name failing cluster %s", err, c)
				}
				if failing {
					// A name no cluster can have is counted under "<invalid>".
					if got := testutil.ToFloat64(clusterSyncFailures.WithLabelValues(clusterLabel(c), tc.reason)) - failuresBefore[c]; got != 1 {
						t.Errorf("failure counter {cluster=%s, reason=%s} rose by %v, want 1", clusterLabel(c), tc.reason, got)
					}
				}
			}
			if tc.reason != "WorkBeingDeleted" && tc.reason != "RenderFailed" && tc.reason != "WorkTooLarge" {
				evs := strings.Join(h.events(), "\n")
				if !strings.Contains(evs, "Warning SyncWorkFailed") || !strings.Contains(evs, tc.wantErr) {
					t.Errorf("events %q lack a SyncWorkFailed warning carrying %q", evs, tc.wantErr)
				}
			}
		})
	}
}

func TestSyncSucceedsAndIsIdempotent(t *testing.T) {
	writes := 0
	h := newHarness(t, interceptor.Funcs{
		Create: func(ctx context.Context, cl client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			writes++
			return cl.Create(ctx, obj, opts...)
		},
		Update: func(ctx context.Context, cl client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			writes++
			return cl.Update(ctx, obj, opts...)
		},
	}, seedDeployment(), seedBinding("member1", "member2"))
	if err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	if writes != 2 || !h.liveWork("member1") || !h.liveWork("member2") {
		t.Fatalf("writes %d, want 2 Works created", writes)
	}
	evs := h.events()
	if len(evs) != 2 || !strings.HasPrefix(evs[0], "Normal SyncWorkSucceed") {
		t.Fatalf("events %q, want SyncWorkSucceed on binding and template", evs)
	}
	rb := &workv1alpha2.ResourceBinding{}
	_ = h.client.Get(context.Background(), types.NamespacedName{Namespace: "default", Name: "nginx-deployment"}, rb)
	if len(rb.Finalizers) != 1 || rb.Finalizers[0] != workv1alpha2.BindingControllerFinalizer {
		t.Fatalf("finalizers %v, want the binding controller's", rb.Finalizers)
	}
	writes = 0
	if err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	if writes != 0 || len(h.events()) != 0 {
		t.Fatalf("a resync with nothing changed wrote %d Works", writes)
	}
}

func TestTemplateNotFoundDoesNotRequeue(t *testing.T) {
	h := newHarness(t, interceptor.Funcs{}, seedBinding("member1"))
	res, err := h.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "default", Name: "nginx-deployment"}})
	if err != nil || !res.IsZero() {
		t.Fatalf("got %v %v, want no requeue", res, err)
	}
	if h.liveWork("member1") {
		t.Fatal("a Work was written without a template")
	}
}

func TestUnservedKindIsReportedNotRetried(t *testing.T) {
	rb := seedBinding("member1")
	rb.Spec.Resource.APIVersion, rb.Spec.Resource.Kind = "example.com/v1", "Widget"
	h := newHarness(t, interceptor.Funcs{}, rb)
	if err := h.reconcile(); !isParked(ctrl.Result{}, err) {
		t.Fatalf("Reconcile error = %v, want a terminal error (retrying cannot help)", err)
	}
	evs := strings.Join(h.events(), "\n")
	if !strings.Contains(evs, "Warning SyncWorkFailed") || !strings.Contains(evs, "example.com/v1, Kind=Widget") {
		t.Fatalf("events %q, want a SyncWorkFailed warning naming the kind", evs)
	}
}

func TestOrphanWorksAreRemoved(t *testing.T) {
	h := newHarness(t, interceptor.Funcs{}, seedDeployment(), seedBinding("member1", "member2"))
	if err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	rb := &workv1alpha2.ResourceBinding{}
	_ = h.client.Get(context.Background(), types.NamespacedName{Namespace: "default", Name: "nginx-deployment"}, rb)
	rb.Spec.Clusters = rb.Spec.Clusters[:1]
	if err := h.client.Update(context.Background(), rb); err != nil {
		t.Fatal(err)
	}
	if err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	if !h.liveWork("member1") || h.liveWork("member2") {
		t.Fatalf("member1 live %v, member2 live %v; want only member1", h.liveWork("member1"), h.liveWork("member2"))
	}
}

func TestOrphanOfGracefulEvictionIsKept(t *testing.T) {
	h := newHarness(t, interceptor.Funcs{}, seedDeployment(), seedBinding("member1", "member2"))
	if err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	rb := &workv1alpha2.ResourceBinding{}
	_ = h.client.Get(context.Background(), types.NamespacedName{Namespace: "default", Name: "nginx-deployment"}, rb)
	rb.Spec.Clusters = rb.Spec.Clusters[:1]
	rb.Spec.GracefulEvictionTasks = []workv1alpha2.GracefulEvictionTask{{FromCluster: "member2", PurgeMode: "Gracefully"}}
	if err := h.client.Update(context.Background(), rb); err != nil {
		t.Fatal(err)
	}
	if err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	if !h.liveWork("member2") {
		t.Fatal("the Work of a cluster under graceful eviction was deleted")
	}
}

func TestDeletionDeletesWorksThenReleasesFinalizer(t *testing.T) {
	h := newHarness(t, interceptor.Funcs{}, seedDeployment(), seedBinding("member1", "member2"))
	if err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	rb := &workv1alpha2.ResourceBinding{}
	key := types.NamespacedName{Namespace: "default", Name: "nginx-deployment"}
	_ = h.client.Get(context.Background(), key, rb)
	if err := h.client.Delete(context.Background(), rb); err != nil {
		t.Fatal(err)
	}
	if err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	// The fake client keeps the Works' execution finalizer, as a disconnected member would:
	// they are terminating, and the binding is gone all the same.
	for _, c := range []string{"member1", "member2"} {
		if h.liveWork(c) {
			t.Errorf("cluster %s still has a live Work", c)
		}
	}
	if err := h.client.Get(context.Background(), key, rb); !apierrors.IsNotFound(err) {
		t.Fatalf("binding still there (finalizers %v): %v", rb.Finalizers, err)
	}
}

func TestFinalizerPatchTouchesNothingElse(t *testing.T) {
	var patches, statusPatches []string
	h := newHarness(t, interceptor.Funcs{
		Patch: func(ctx context.Context, cl client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			data, _ := patch.Data(obj)
			patches = append(patches, string(data))
			return cl.Patch(ctx, obj, patch, opts...)
		},
		SubResourcePatch: func(ctx context.Context, cl client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			data, _ := patch.Data(obj)
			statusPatches = append(statusPatches, string(data))
			return cl.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	}, seedDeployment(), seedBinding("member1"))
	if err := h.reconcile(); err != nil {
		t.Fatal(err)
	}
	if len(patches) != 1 || len(statusPatches) != 1 {
		t.Fatalf("patches %q and status patches %q, want one each", patches, statusPatches)
	}
	want := fmt.Sprintf(`{"metadata":{"finalizers":["%s"],"resourceVersion":`, workv1alpha2.BindingControllerFinalizer)
	if !strings.HasPrefix(patches[0], want) || strings.Contains(patches[0], "spec") {
		t.Fatalf("patch %s, want only finalizers guarded by resourceVersion", patches[0])
	}
	var status map[string]any
	if err := json.Unmarshal([]byte(statusPatches[0]), &status); err != nil {
		t.Fatal(err)
	}
	if len(status) != 2 || status["status"] == nil || len(status["status"].(map[string]any)) != 1 ||
		status["metadata"].(map[string]any)["resourceVersion"] == nil {
		t.Fatalf("status patch %s, want only status.conditions guarded by resourceVersion", statusPatches[0])
	}
}

// panicOnCreateIn stands for a bug in one cluster's render or apply.
func panicOnCreateIn(namespace string) interceptor.Funcs {
	return interceptor.Funcs{Create: func(ctx context.Context, cl client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
		if obj.GetNamespace() == namespace {
			panic("injected fault")
		}
		return cl.Create(ctx, obj, opts...)
	}}
}

// logLines collects what the reconciler logs; clusters log from several goroutines.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) add(prefix, args string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, args)
}

func (l *logLines) containing(part string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, line := range l.lines {
		if strings.Contains(line, part) {
			out = append(out, line)
		}
	}
	return out
}

// A panic in one cluster's sync fails that cluster only, whether clusters are synced one
// after another or several at once: the process lives, the other clusters get their Works,
// and the failure is reported and retried like any other.
func TestPanicInOneClusterFailsThatClusterOnly(t *testing.T) {
	clusters := []string{"member1", "member2", "member3", "member4"}
	for _, concurrency := range []int{1, 4} {
		t.Run(fmt.Sprintf("concurrency %d", concurrency), func(t *testing.T) {
			h := newHarness(t, panicOnCreateIn("karmada-es-member2"), seedDeployment(), seedBinding(clusters...))
			h.r.ClusterSyncConcurrency = concurrency
			logs := &logLines{}
			ctx := ctrl.LoggerInto(context.Background(), funcr.New(logs.add, funcr.Options{}))
			failuresBefore := testutil.ToFloat64(clusterSyncFailures.WithLabelValues("member2", "Panic"))

			res, err := h.r.Reconcile(ctx, ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "default", Name: "nginx-deployment"}})

			want := "cluster member2: panic while syncing work karmada-es-member2/nginx-687f7fb96f: injected fault"
			if err == nil || err.Error() != want || !res.IsZero() {
				t.Fatalf("Reconcile = %v, %v; want the error %q, retried with backoff", res, err, want)
			}
			for _, c := range clusters {
				if got := h.liveWork(c); got != (c != "member2") {
					t.Errorf("cluster %s: live work = %v, want %v", c, got, c != "member2")
				}
			}
			cond := h.worksSynced()
			wantCond := "3/4 clusters synced; member2: panic while syncing work karmada-es-member2/nginx-687f7fb96f: injected fault"
			if cond == nil || cond.Status != metav1.ConditionFalse || cond.Message != wantCond {
				t.Errorf("WorksSynced = %+v, want False with message %q", cond, wantCond)
			}
			if got := testutil.ToFloat64(clusterSyncFailures.WithLabelValues("member2", "Panic")) - failuresBefore; got != 1 {
				t.Errorf("failure counter {cluster=member2, reason=Panic} rose by %v, want 1", got)
			}
			panics := logs.containing(`"msg"="Panic while syncing work"`)
			if len(panics) != 1 {
				t.Fatalf("log lines %q, want one about the panic", logs.lines)
			}
			for _, part := range []string{`"cluster"="member2"`, `"work"="karmada-es-member2/nginx-687f7fb96f"`,
				`"error"="cluster member2: panic while syncing`, `"stack"=`, "panicOnCreateIn"} {
				if !strings.Contains(panics[0], part) {
					t.Errorf("panic log line %q lacks %q", panics[0], part)
				}
			}
		})
	}
}

// Bindings and clusters come and go for as long as the controller runs. What it keeps per
// binding (stuck warnings, blocked clusters) and per cluster (the blocked gauge, the
// failure counter) must go with them, and a binding naming clusters that cannot exist
// must not add series at all.
func TestTrackersAndSeriesDoNotGrowAsBindingsAndClustersComeAndGo(t *testing.T) {
	const bindings = 60
	ctx := context.Background()
	key := func(i int) types.NamespacedName {
		return types.NamespacedName{Namespace: "default", Name: fmt.Sprintf("soak-%d", i)}
	}
	blockedCluster := func(i int) string { return fmt.Sprintf("soak-blocked-%d", i) }
	objs := []client.Object{seedDeployment()}
	for i := 0; i < bindings; i++ {
		// One cluster each that a terminating Work blocks (for half of them for longer than
		// StuckWorkWarningAfter), and two names no cluster can have.
		rb := seedBinding(blockedCluster(i), fmt.Sprintf("Bad_Name_%d", i), strings.Repeat("long", 80)+fmt.Sprint(i))
		rb.Name = key(i).Name
		old := terminatingWork(blockedCluster(i))
		old.Annotations[workv1alpha2.ResourceBindingNameAnnotation] = rb.Name
		if i%2 == 0 {
			old.DeletionTimestamp = &metav1.Time{Time: time.Now().Add(-10 * time.Minute)}
		}
		objs = append(objs, rb, old)
	}
	// The fake client keeps a deletionTimestamp only of objects it starts with.
	h := newHarness(t, interceptor.Funcs{}, objs...)
	gaugeBefore := testutil.CollectAndCount(blockedBindingsGauge)
	failuresBefore := testutil.CollectAndCount(clusterSyncFailures)
	reconcile := func(i int) {
		t.Helper()
		if _, err := h.r.Reconcile(ctx, ctrl.Request{NamespacedName: key(i)}); err != nil {
			t.Fatalf("binding %d: %v", i, err)
		}
		h.events() // the fake recorder blocks once full
	}
	for i := 0; i < bindings; i++ {
		reconcile(i)
	}
	if got := len(h.r.deletionWaits.byCluster); got != bindings {
		t.Fatalf("%d clusters tracked as blocking, want %d", got, bindings)
	}
	if got := len(h.r.stuck.warned); got != bindings/2 {
		t.Fatalf("%d bindings with stuck warnings, want %d", got, bindings/2)
	}

	// Everything goes: the bindings, their Works once the execution side lets them go,
	// and the blocked clusters.
	for i := 0; i < bindings; i++ {
		rb := &workv1alpha2.ResourceBinding{}
		if err := h.client.Get(ctx, key(i), rb); err != nil {
			t.Fatal(err)
		}
		if err := h.client.Delete(ctx, rb); err != nil {
			t.Fatal(err)
		}
		reconcile(i)
		if err := h.client.Get(ctx, key(i), rb); !apierrors.IsNotFound(err) {
			t.Fatalf("binding %d still there: %v", i, err)
		}
	}
	works := &workv1alpha1.WorkList{}
	if err := h.client.List(ctx, works); err != nil {
		t.Fatal(err)
	}
	for i := range works.Items {
		w := &works.Items[i]
		w.Finalizers = nil
		if err := h.client.Update(ctx, w); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
	}
	for i := 0; i < bindings; i++ {
		reconcile(i) // the binding's deletion event: reconcileGone
	}
	clusterGone := forgetDeletedClusters()
	for i := 0; i < bindings; i++ {
		cluster := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: blockedCluster(i)}}
		clusterGone.Delete(ctx, event.DeleteEvent{Object: cluster}, nil)
	}

	if n := len(h.r.deletionWaits.byCluster); n != 0 {
		t.Errorf("%d clusters still tracked as blocking after everything went, want 0", n)
	}
	if n := len(h.r.stuck.warned); n != 0 {
		t.Errorf("%d deleted bindings still have stuck warnings remembered, want 0", n)
	}
	if n := testutil.CollectAndCount(blockedBindingsGauge); n != gaugeBefore {
		t.Errorf("blocked_bindings has %d series after everything went, want %d as before", n, gaugeBefore)
	}
	// At most one new series: {cluster="<invalid>", reason="RenderFailed"} for all the
	// names no cluster can have.
	if n := testutil.CollectAndCount(clusterSyncFailures); n > failuresBefore+1 {
		t.Errorf("cluster_sync_failures_total has %d series after %d bindings came and went, want at most %d",
			n, bindings, failuresBefore+1)
	}
	if got := testutil.ToFloat64(clusterSyncFailures.WithLabelValues(invalidClusterLabel, workapply.ReasonRenderFailed)); got < 2*bindings {
		t.Errorf("failures counted under %q = %v, want at least %d", invalidClusterLabel, got, 2*bindings)
	}
}
