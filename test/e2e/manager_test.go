// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
	"github.com/binding-controller/binding-controller/pkg/names"
)

func freeAddress() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	defer l.Close()
	return l.Addr().String()
}

func httpGet(url string) (int, string) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func newNamespace(name string) string {
	Expect(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}})).To(Succeed())
	return name
}

// createWorkload creates Deployment ns/name and its binding to clusters.
func createWorkload(ns, name string, clusters ...string) {
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}},
			},
		},
	}
	Expect(k8s.Create(ctx, d)).To(Succeed())
	rb := &workv1alpha2.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name + "-deployment", Namespace: ns,
			Labels: map[string]string{workv1alpha2.ResourceBindingPermanentIDLabel: "id-" + name}},
		Spec: workv1alpha2.ResourceBindingSpec{
			Resource: workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns, Name: name},
		},
	}
	for _, c := range clusters {
		rb.Spec.Clusters = append(rb.Spec.Clusters, workv1alpha2.TargetCluster{Name: c})
	}
	Expect(k8s.Create(ctx, rb)).To(Succeed())
}

// liveWorks lists the names of live Works of template namespace ns, as cluster/work.
func liveWorks(ns string) func() []string {
	return func() []string {
		list := &workv1alpha1.WorkList{}
		Expect(k8s.List(ctx, list)).To(Succeed())
		var out []string
		for _, w := range list.Items {
			if w.Annotations[workv1alpha2.ResourceBindingNamespaceAnnotation] == ns && w.DeletionTimestamp == nil {
				cluster, _ := names.ClusterOfExecutionNamespace(w.Namespace)
				out = append(out, cluster+"/"+w.Name)
			}
		}
		return out
	}
}

func expectedWorks(ns string, clusters []string, templates ...string) []string {
	var out []string
	for _, t := range templates {
		for _, c := range clusters {
			out = append(out, c+"/"+names.WorkName("Deployment", ns, t))
		}
	}
	return out
}

var members3 = []string{"member1", "member2", "member3"}

var _ = Describe("Probes and metrics", func() {
	It("serve health, readiness once synced, and the sync metrics", func() {
		metricsAddr, probeAddr := freeAddress(), freeAddress()
		manager := startManager("--leader-elect=false", "--metrics-bind-address="+metricsAddr,
			"--health-probe-bind-address="+probeAddr, "--rate-limiter-max-delay=1s")
		Eventually(func() int { code, _ := httpGet("http://" + probeAddr + "/healthz"); return code }).Should(Equal(200))
		Eventually(func() int { code, _ := httpGet("http://" + probeAddr + "/readyz"); return code }).Should(Equal(200))

		ns := newNamespace("e2e-metrics")
		createWorkload(ns, "served", "member1", "member2")
		// member7 has not joined: no Cluster object, so no Work, as in Karmada.
		createWorkload(ns, "partly", "member1", "member7")
		Eventually(liveWorks(ns)).Should(ConsistOf(append(expectedWorks(ns, []string{"member1", "member2"}, "served"),
			expectedWorks(ns, []string{"member1"}, "partly")...)))

		scrape := func() string { _, body := httpGet("http://" + metricsAddr + "/metrics"); return body }
		Eventually(scrape).Should(And(
			ContainSubstring(`controller_runtime_reconcile_total{controller="resourcebinding"`),
			MatchRegexp(`binding_controller_sync_duration_seconds_count\{kind="ResourceBinding",result="success"\} [1-9]`),
			MatchRegexp(`binding_controller_sync_duration_seconds_count\{kind="ResourceBinding",result="failure"\} [1-9]`),
			MatchRegexp(`binding_controller_cluster_sync_failures_total\{cluster="member7",reason="ClusterNotFound"\} [1-9]`),
			MatchRegexp(`binding_controller_work_writes_total\{operation="create"\} [3-9]`),
		))
		Expect(scrape()).NotTo(ContainSubstring(`binding_controller_cluster_sync_failures_total{cluster="member2"`))
		manager.stop()
	})
})

var _ = Describe("Leader election", func() {
	leaseName := "e2e-binding-controller"
	leaderArgs := []string{"--leader-elect=true", "--leader-elect-resource-namespace=default",
		"--leader-elect-resource-name=" + leaseName, "--leader-elect-lease-duration=4s",
		"--leader-elect-renew-deadline=3s", "--leader-elect-retry-period=500ms",
		"--metrics-bind-address=0", "--health-probe-bind-address=0"}
	const acquired = "Successfully acquired lease"
	const workersStarted = "Starting workers"

	It("lets only the leader write, and hands over to the standby when the leader dies", func() {
		first := startManager(leaderArgs...)
		Eventually(first.log).Should(ContainSubstring(acquired))
		second := startManager(leaderArgs...)
		Eventually(second.log).Should(ContainSubstring("Attempting to acquire leader lease"))

		ns := newNamespace("e2e-leader")
		createWorkload(ns, "before", members3...)
		Eventually(liveWorks(ns)).Should(ConsistOf(expectedWorks(ns, members3, "before")))
		Expect(second.log()).NotTo(ContainSubstring(workersStarted), "the standby must not run controllers")
		Expect(second.log()).NotTo(ContainSubstring("Sync work of"))

		Expect(first.Cmd.Process.Kill()).To(Succeed()) // SIGKILL: no chance to release the lease
		Eventually(first.Done()).Should(BeClosed())
		createWorkload(ns, "after", members3...)
		Eventually(second.log, 30*time.Second).Should(ContainSubstring(acquired))
		Eventually(liveWorks(ns)).Should(ConsistOf(expectedWorks(ns, members3, "before", "after")))
		Consistently(liveWorks(ns), 2*time.Second).Should(HaveLen(6), "no Work lost or duplicated")
		second.stop()
	})

	It("releases the lease on SIGTERM", func() {
		manager := startManager(leaderArgs...)
		Eventually(manager.log, 30*time.Second).Should(ContainSubstring(acquired))
		manager.stop()
		Expect(manager.Cmd.ProcessState.ExitCode()).To(Equal(0), manager.log())
		lease := &coordinationv1.Lease{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: "default", Name: leaseName}, lease)).To(Succeed())
		Expect(ptr.Deref(lease.Spec.HolderIdentity, "")).To(BeEmpty(),
			fmt.Sprintf("lease still held: %+v", lease.Spec))
		Expect(strings.Count(manager.log(), acquired)).To(Equal(1))
	})
})
