// SPDX-License-Identifier: Apache-2.0

package bindingcontroller_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/binding-controller/binding-controller/internal/testenv/selfsigned"
	configv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/config/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
)

// pipelineWebhook is an interpreter webhook for Pipelines over HTTPS, with a certificate
// of a CA of its own. It sets spec.workers to the desired replicas, except for the
// objects named for a failure, which fail when asked for 5:
//   - "stuck" never answers;
//   - "refused" answers successful: false;
//   - "badpatch" answers a patch of a path that is not there.
type pipelineWebhook struct {
	url string
	ca  *selfsigned.CA
	mu  sync.Mutex
	// seen are the requests it got, "name/operation/replicas".
	seen []string
}

func startPipelineWebhook() *pipelineWebhook {
	ca, err := selfsigned.NewCA()
	Expect(err).NotTo(HaveOccurred())
	h := &pipelineWebhook{ca: ca}
	stop := make(chan struct{})
	srv, err := ca.StartServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var in struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Request    struct {
				UID       string `json:"uid"`
				Name      string `json:"name"`
				Operation string `json:"operation"`
				Replicas  int32  `json:"replicas"`
			} `json:"request"`
		}
		_ = json.Unmarshal(raw, &in)
		req := in.Request
		h.mu.Lock()
		h.seen = append(h.seen, fmt.Sprintf("%s %s/%s/%s/%d", in.APIVersion, in.Kind, req.Name, req.Operation, req.Replicas))
		h.mu.Unlock()
		response := map[string]any{"uid": req.UID, "successful": true, "patchType": "JSONPatch"}
		patch := []map[string]any{{"op": "replace", "path": "/spec/workers", "value": req.Replicas}}
		if req.Replicas == 5 {
			switch req.Name {
			case "stuck":
				select {
				case <-r.Context().Done():
				case <-stop:
				}
				return
			case "refused":
				response = map[string]any{"uid": req.UID, "successful": false, "status": map[string]any{"code": 503, "message": "no capacity for 5 workers"}}
			case "badpatch":
				patch = []map[string]any{{"op": "replace", "path": "/spec/missing/workers", "value": req.Replicas}}
			}
		}
		if response["successful"] == true {
			response["patch"], _ = json.Marshal(patch)
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"apiVersion": "config.karmada.io/v1alpha1", "kind": "ResourceInterpreterContext", "response": response})
	}))
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(func() { close(stop); srv.Close() })
	h.url = srv.URL + "/revise-replica"
	return h
}

func (h *pipelineWebhook) requests() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string{}, h.seen...)
}

// pipelineWebhookConfiguration revises Pipelines of version at url, trusting caBundle,
// with a 1s timeout.
func pipelineWebhookConfiguration(name, version, url string, caBundle []byte) *configv1alpha1.ResourceInterpreterWebhookConfiguration {
	return &configv1alpha1.ResourceInterpreterWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks: []configv1alpha1.ResourceInterpreterWebhook{{
			Name:         "workers.pipelines.example.io",
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: ptr.To(url), CABundle: caBundle},
			Rules: []configv1alpha1.RuleWithOperations{{
				Operations: []configv1alpha1.InterpreterOperation{configv1alpha1.InterpreterOperationReviseReplica},
				Rule:       configv1alpha1.Rule{APIGroups: []string{"pipelines.example.io"}, APIVersions: []string{version}, Kinds: []string{"Pipeline"}},
			}},
			TimeoutSeconds:             ptr.To[int32](1),
			InterpreterContextVersions: []string{"v1alpha1"},
		}},
	}
}

// closedPort is a local address nothing listens on: calls to it are refused.
func closedPort() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	addr := l.Addr().String()
	Expect(l.Close()).To(Succeed())
	return addr
}

var _ = Describe("Replicas through an interpreter webhook", func() {
	It("revises a custom kind over HTTPS; a webhook that times out, refuses or patches wrong fails only its cluster and blocks no other binding", func() {
		ns := newNamespace()
		hook := startPipelineWebhook()
		pipeline := func(name, version string) (*unstructured.Unstructured, *workv1alpha2.ResourceBinding) {
			p := createTemplate(ns, fmt.Sprintf(`{"apiVersion":"pipelines.example.io/%s","kind":"Pipeline","metadata":{"name":%q},"spec":{"workers":9}}`, version, name))
			return p, dividedBinding(p, 9, map[string]int32{"member1": 4, "member2": 5})
		}

		By("without a webhook the kind keeps the template's count")
		etlTemplate, etl := pipeline("etl", "v1")
		Eventually(workloadField("member1", etlTemplate, "spec", "workers")).Should(BeEquivalentTo(9))
		Eventually(workloadField("member2", etlTemplate, "spec", "workers")).Should(BeEquivalentTo(9))

		By("creating the webhook configuration re-syncs the bindings of the kind it revises")
		cfg := pipelineWebhookConfiguration("pipeline-hooks-"+ns, "v1", hook.url, hook.ca.PEM)
		Expect(k8s.Create(ctx, cfg)).To(Succeed())
		DeferCleanup(func() { _ = k8s.Delete(ctx, cfg) })
		Eventually(workloadField("member1", etlTemplate, "spec", "workers")).Should(BeEquivalentTo(4))
		Eventually(workloadField("member2", etlTemplate, "spec", "workers")).Should(BeEquivalentTo(5))
		Expect(hook.requests()).To(ContainElements(
			"config.karmada.io/v1alpha1 ResourceInterpreterContext/etl/ReviseReplica/4",
			"config.karmada.io/v1alpha1 ResourceInterpreterContext/etl/ReviseReplica/5"))

		hookName := `webhook "workers.pipelines.example.io" of ResourceInterpreterWebhookConfiguration "` + cfg.Name + `"`
		for _, c := range []struct{ name, says string }{
			{"stuck", "no answer within the webhook's timeout of 1s"},
			{"refused", "webhook call failed, get status code: 503, msg: no capacity for 5 workers"},
			{"badpatch", "applying the webhook's patch"},
		} {
			By("a webhook call for " + c.name + " fails member2 only, naming the webhook, the operation and the cluster")
			started := time.Now()
			template, b := pipeline(c.name, "v1")
			Eventually(worksSyncedOn(ns, b.Name)).Should(And(
				ContainSubstring("1/2 clusters synced"),
				ContainSubstring("cluster member2: ReviseReplica of Pipeline "+ns+"/"+c.name+" by "+hookName+" failed: "),
				ContainSubstring(c.says)))
			GinkgoWriter.Printf("%s: member2 failed %s after the binding was created\n", c.name, time.Since(started).Round(time.Millisecond))
			Eventually(workloadField("member1", template, "spec", "workers")).Should(BeEquivalentTo(4))
			Eventually(eventsOn(ns, "ResourceBinding", b.Name)).Should(ContainElement(And(
				ContainSubstring("SyncWorkFailed"), ContainSubstring(hookName), ContainSubstring(c.says))))
		}

		By("the failures are retried, and meanwhile other bindings are served")
		failed := failures(ns, "stuck-binding")
		Eventually(failed).Should(BeNumerically(">=", 2))
		Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
			if err := k8s.Get(ctx, client.ObjectKeyFromObject(etl), etl); err != nil {
				return err
			}
			etl.Spec.Clusters = []workv1alpha2.TargetCluster{{Name: "member1", Replicas: 3}, {Name: "member2", Replicas: 6}}
			return k8s.Update(ctx, etl)
		})).To(Succeed())
		Eventually(workloadField("member1", etlTemplate, "spec", "workers")).Should(BeEquivalentTo(3))
		Eventually(workloadField("member2", etlTemplate, "spec", "workers")).Should(BeEquivalentTo(6))
		Eventually(failed).Should(BeNumerically(">=", 3))

		By("a webhook that refuses connections fails the clusters of its kind only")
		v2 := pipelineWebhookConfiguration("pipeline-v2-hooks-"+ns, "v2", "https://"+closedPort()+"/revise-replica", hook.ca.PEM)
		Expect(k8s.Create(ctx, v2)).To(Succeed())
		DeferCleanup(func() { _ = k8s.Delete(ctx, v2) })
		_, offline := pipeline("offline", "v2")
		Eventually(worksSyncedOn(ns, offline.Name)).Should(And(
			ContainSubstring("0/2 clusters synced"),
			ContainSubstring(`by webhook "workers.pipelines.example.io" of ResourceInterpreterWebhookConfiguration "`+v2.Name+`" failed: `),
			ContainSubstring("connection refused")))
		Eventually(worksSyncedOn(ns, etl.Name)).Should(Equal("True Synced: 2/2 clusters synced"))

		By("deleting the configuration leaves the kind to the native rules again")
		Expect(k8s.Delete(ctx, cfg)).To(Succeed())
		Eventually(workloadField("member1", etlTemplate, "spec", "workers")).Should(BeEquivalentTo(9))
		Eventually(worksSyncedOn(ns, "refused-binding")).Should(Equal("True Synced: 2/2 clusters synced"))
	})
})
