// SPDX-License-Identifier: Apache-2.0

package bindingcontroller

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr/funcr"
	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

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
