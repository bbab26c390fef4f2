// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"time"

	"github.com/binding-controller/binding-controller/internal/testenv/testkit"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
)

func nginxDeployment() *appsv1.Deployment { return testkit.Deployment("default", "nginx") }

func nginxBinding(permanentID string) *workv1alpha2.ResourceBinding {
	return testkit.Binding("default", "nginx-deployment", permanentID, nginxDeployment(), "member1", "member2", "member3")
}

func nginxWork(cluster string) func() string {
	return func() string {
		w := &workv1alpha1.Work{}
		err := k8s.Get(ctx, types.NamespacedName{Namespace: "karmada-es-" + cluster, Name: "nginx-687f7fb96f"}, w)
		switch {
		case apierrors.IsNotFound(err):
			return "absent"
		case err != nil:
			return "error: " + err.Error()
		case w.DeletionTimestamp != nil:
			return "terminating"
		}
		return "live:" + w.Labels[workv1alpha2.ResourceBindingPermanentIDLabel]
	}
}

func eventsOn(kind, name string) func() []string {
	return func() []string {
		list := &corev1.EventList{}
		Expect(k8s.List(ctx, list, client.InNamespace("default"))).To(Succeed())
		var out []string
		for _, e := range list.Items {
			if e.InvolvedObject.Kind == kind && e.InvolvedObject.Name == name {
				out = append(out, e.Type+" "+e.Reason+": "+e.Message)
			}
		}
		return out
	}
}

var _ = Describe("The seed case, driven through the binary", Ordered, func() {
	var manager *managerProcess

	BeforeAll(func() {
		manager = startManager("--leader-elect=false", "--metrics-bind-address=0", "--health-probe-bind-address=0",
			"--rate-limiter-max-delay=2s")
	})

	It("writes nginx-687f7fb96f into every member's execution namespace", func() {
		Expect(k8s.Create(ctx, nginxDeployment())).To(Succeed())
		Expect(k8s.Create(ctx, nginxBinding("id-first"))).To(Succeed())
		for _, m := range []string{"member1", "member2", "member3"} {
			Eventually(nginxWork(m)).Should(Equal("live:id-first"), m)
		}
	})

	It("serves member2 and member3 while member1's old Work is stuck, and recovers member1 by itself", func() {
		sim.Disconnect("member1")
		rb := &workv1alpha2.ResourceBinding{}
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: "default", Name: "nginx-deployment"}, rb)).To(Succeed())
		Expect(k8s.Delete(ctx, rb)).To(Succeed())
		Eventually(nginxWork("member2")).Should(Equal("absent"))
		Eventually(nginxWork("member3")).Should(Equal("absent"))
		Eventually(func() bool { return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(rb), rb)) }).Should(BeTrue())
		Expect(nginxWork("member1")()).To(Equal("terminating"))
		Expect(k8s.Delete(ctx, nginxDeployment())).To(Succeed())

		Expect(k8s.Create(ctx, nginxDeployment())).To(Succeed())
		Expect(k8s.Create(ctx, nginxBinding("id-second"))).To(Succeed())
		Eventually(nginxWork("member2"), 5*time.Second).Should(Equal("live:id-second"))
		Eventually(nginxWork("member3"), 5*time.Second).Should(Equal("live:id-second"))
		Expect(nginxWork("member1")()).To(Equal("terminating"))

		const failure = "work karmada-es-member1/nginx-687f7fb96f is being deleted"
		Eventually(manager.log).Should(ContainSubstring(
			"Failed to transform resourceBinding(default/nginx-deployment) to works. Error: " + failure + "."))
		Eventually(eventsOn("ResourceBinding", "nginx-deployment")).Should(ContainElement("Warning SyncWorkFailed: " + failure))
		Eventually(eventsOn("Deployment", "nginx")).Should(ContainElement("Warning SyncWorkFailed: " + failure))

		sim.Connect("member1")
		Eventually(nginxWork("member1"), 10*time.Second).Should(Equal("live:id-second"))
	})

	It("stops cleanly on SIGTERM", func() {
		manager.stop()
		Expect(manager.Cmd.ProcessState.ExitCode()).To(Equal(0), manager.log())
	})
})

var _ = Describe("Bad command lines", func() {
	It("reject an unknown flag with one clear line", func() {
		code, out := runManager("--no-such-flag")
		Expect(code).NotTo(Equal(0))
		Expect(out).To(Equal("binding-controller-manager: flag provided but not defined: -no-such-flag (see --help)\n"))
	})

	It("reject an unknown controller name", func() {
		code, out := runManager("--controllers=resourcebinding,nosuch")
		Expect(code).NotTo(Equal(0))
		Expect(out).To(ContainSubstring(`unknown controller "nosuch"`))
	})

	It("fail fast with one line when the API server cannot be reached", func() {
		p := startManagerWithKubeconfig(unreachableKubeconfig())
		Eventually(p.Done(), 30*time.Second).Should(BeClosed())
		Expect(p.Cmd.ProcessState.ExitCode()).NotTo(Equal(0))
		Expect(p.log()).To(MatchRegexp(`^binding-controller-manager: cannot reach the API server at https://127\.0\.0\.1:1: .*\n$`))
	})
})
