// SPDX-License-Identifier: Apache-2.0

// Package dashboard_test checks config/grafana/binding-controller.json against the metrics
// the controller-manager really serves: it runs the manager on a real API server, drives a
// binding through a sync that succeeds in one cluster, fails in another and is blocked in
// a third, so that every series the dashboard reads exists, and then requires every metric
// named by a panel or a template variable to be among those gathered.
//
// Run with: KUBEBUILDER_ASSETS=$PWD/bin/k8s go test ./test/integration/dashboard/ -count=1
package dashboard_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/binding-controller/binding-controller/internal/testenv/envtestutil"
	"github.com/binding-controller/binding-controller/internal/testenv/suite"
	"github.com/binding-controller/binding-controller/internal/testenv/testkit"
	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
	"github.com/binding-controller/binding-controller/pkg/names"
	"github.com/binding-controller/binding-controller/test/dashboard"
)

var (
	ctx context.Context
	k8s client.Client
)

func TestDashboard(t *testing.T) {
	suite.Run(t, "Grafana dashboard against the served metrics",
		suite.Timeouts{Eventually: 30 * time.Second, Polling: 50 * time.Millisecond})
}

var _ = BeforeSuite(func() {
	plane := suite.StartPlane(suite.PlaneOptions{CRDs: []string{envtestutil.KarmadaCRDDir()}, Manager: suite.ManagerDefaults})
	ctx, k8s = plane.Ctx, plane.Client
})

// served gathers the manager's metrics as a scrape would see them.
func served() map[string]bool {
	families, err := metrics.Registry.Gather()
	Expect(err).NotTo(HaveOccurred())
	return dashboard.Served(families)
}

var _ = Describe("config/grafana/binding-controller.json", func() {
	It("names only metrics the manager serves, once a binding has synced, failed and been blocked", func() {
		// synced: has its execution namespace; failing: has none (NotFound); blocked: an
		// older Work of the same name is held terminating by its finalizer.
		const synced, failing, blocked = "member1", "member2", "member3"
		for _, c := range []string{synced, blocked} {
			Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: names.ExecutionNamespace(c)}})).To(Succeed())
		}
		d := testkit.Deployment(metav1.NamespaceDefault, "nginx")
		Expect(k8s.Create(ctx, d)).To(Succeed())
		old := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{
			Namespace:  names.ExecutionNamespace(blocked),
			Name:       names.WorkName("Deployment", d.Namespace, d.Name),
			Finalizers: []string{workv1alpha1.ExecutionControllerFinalizer},
		}}
		Expect(k8s.Create(ctx, old)).To(Succeed())
		Expect(k8s.Delete(ctx, old)).To(Succeed())
		Expect(k8s.Create(ctx, testkit.Binding(d.Namespace, "nginx-deployment", "id-1", d, synced, failing, blocked))).To(Succeed())

		// The series only the three outcomes create: a finished sync, a cluster failure, a
		// blocked binding, a Work written.
		Eventually(served).Should(And(
			HaveKey("binding_controller_sync_duration_seconds_count"),
			HaveKey("binding_sync_work_duration_seconds_count"),
			HaveKey("binding_controller_cluster_sync_failures_total"),
			HaveKey("binding_controller_blocked_bindings"),
			HaveKey("binding_controller_work_writes_total"),
		))

		dash, err := dashboard.Read(filepath.Join(envtestutil.RepoRoot(), "config", "grafana", "binding-controller.json"))
		Expect(err).NotTo(HaveOccurred())
		Expect(dash.Problems(served())).To(BeEmpty())
	})

	It("would fail for a panel naming a metric the manager does not serve", func() {
		dash, err := dashboard.Read(filepath.Join(envtestutil.RepoRoot(), "config", "grafana", "binding-controller.json"))
		Expect(err).NotTo(HaveOccurred())
		have := served()
		before := dash.Problems(have)
		dash.Panels = append(dash.Panels, dashboard.Panel{ID: 99, Type: "timeseries", Title: "Karmada's name for it", Description: "d",
			Targets: []dashboard.Target{{RefID: "A", Expr: `sum(rate(karmada_work_sync_workload_duration_seconds_count[5m]))`}}})
		Expect(dash.Problems(have)).To(Equal(append(before,
			`panel "Karmada's name for it" target A: metric karmada_work_sync_workload_duration_seconds_count is not served`)))
	})
})
