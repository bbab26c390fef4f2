// SPDX-License-Identifier: Apache-2.0

package bindingcontroller_test

import (
	"encoding/base64"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
	"github.com/binding-controller/binding-controller/pkg/names"
)

var _ = Describe("Data and ownership", func() {
	It("never puts a Secret's data into logs, events or conditions, even when a cluster fails", func() {
		ns := newNamespace()
		const secretValue = "s3cr3t-VALUE-that-must-not-leak"
		secret := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "db-password", Namespace: ns},
			StringData: map[string]string{"password": secretValue},
		}
		Expect(k8s.Create(ctx, secret)).To(Succeed())
		rb := &workv1alpha2.ResourceBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "db-password-secret", Namespace: ns,
				Labels: map[string]string{workv1alpha2.ResourceBindingPermanentIDLabel: "id-s"}},
			Spec: workv1alpha2.ResourceBindingSpec{
				Resource: workv1alpha2.ObjectReference{APIVersion: "v1", Kind: "Secret", Namespace: ns, Name: "db-password"},
				// member8 has no execution namespace; Bad_Name cannot be rendered.
				Clusters: []workv1alpha2.TargetCluster{{Name: "member1"}, {Name: "member8"}, {Name: "Bad_Name"}},
			},
		}
		Expect(k8s.Create(ctx, rb)).To(Succeed())
		key := types.NamespacedName{Namespace: "karmada-es-member1", Name: names.WorkName("Secret", ns, "db-password")}
		Eventually(workState(key)).Should(Equal("live:id-s"))
		Eventually(worksSyncedOn(ns, "db-password-secret")).Should(ContainSubstring("member8"))
		Eventually(eventsOn(ns, "Secret", "db-password")).Should(ContainElement(ContainSubstring("Warning SyncWorkFailed")))
		time.Sleep(500 * time.Millisecond) // let the retries log

		encoded := base64.StdEncoding.EncodeToString([]byte(secretValue))
		var said []string
		said = append(said, logs.String(), worksSyncedOn(ns, "db-password-secret")())
		said = append(said, eventsOn(ns, "Secret", "db-password")()...)
		said = append(said, eventsOn(ns, "ResourceBinding", "db-password-secret")()...)
		for _, text := range said {
			Expect(text).NotTo(ContainSubstring(secretValue))
			Expect(text).NotTo(ContainSubstring(encoded))
		}
	})

	It("never touches a Work it did not create, and says whose it is not", func() {
		ns := newNamespace()
		d := deployment(ns, "foreign")
		Expect(k8s.Create(ctx, d)).To(Succeed())
		key := workKey("member1", d)
		foreign := &workv1alpha1.Work{
			ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace, Labels: map[string]string{"owner": "someone-else"}},
			Spec: workv1alpha1.WorkSpec{Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{
				{RawExtension: runtime.RawExtension{Raw: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"` + ns + `"}}`)}}}}},
		}
		Expect(k8s.Create(ctx, foreign)).To(Succeed())
		Expect(k8s.Create(ctx, binding(ns, "foreign-deployment", "id-f", d, "member1", "member2"))).To(Succeed())

		Eventually(workState(workKey("member2", d))).Should(Equal("live:id-f"))
		Eventually(worksSyncedOn(ns, "foreign-deployment")).Should(ContainSubstring(
			"member1: work " + key.String() + " exists and was not created by a binding; leaving it untouched"))
		Consistently(func() string { return getWork(key).ResourceVersion }, 2*time.Second).Should(Equal(foreign.ResourceVersion))
		Expect(strings.Contains(string(getWork(key).Spec.Workload.Manifests[0].Raw), "ConfigMap")).To(BeTrue())
	})
})
