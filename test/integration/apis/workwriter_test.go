// SPDX-License-Identifier: Apache-2.0

package apis_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/binding-controller/binding-controller/internal/testenv/envtestutil"
	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
	"github.com/binding-controller/binding-controller/pkg/workapply"
)

// answers records the bodies of the API server's answers to Work writes.
type answers struct {
	mu     sync.Mutex
	bodies [][]byte
	next   http.RoundTripper
}

func (a *answers) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := a.next.RoundTrip(req)
	if err != nil || (req.Method != http.MethodPost && req.Method != http.MethodPut) {
		return resp, err
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	a.bodies = append(a.bodies, body)
	a.mu.Unlock()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return resp, nil
}

func (a *answers) last() map[string]any {
	a.mu.Lock()
	defer a.mu.Unlock()
	Expect(a.bodies).NotTo(BeEmpty())
	var m map[string]any
	Expect(json.Unmarshal(a.bodies[len(a.bodies)-1], &m)).To(Succeed())
	return m
}

var _ = Describe("Work writes answered with the Work's metadata only", Ordered, func() {
	for _, crds := range []struct{ name, dir string }{
		{"the project's CRDs", envtestutil.ProjectCRDDir()},
		{"Karmada's CRDs", envtestutil.KarmadaCRDDir()},
	} {
		Context("on an API server with "+crds.name, Ordered, func() {
			var (
				srv    *apiServer
				writer *workapply.MetadataWriter
				seen   *answers
				ctx    = context.Background()
			)
			BeforeAll(func() {
				srv = startAPIServer(crds.dir)
				cfg := rest.CopyConfig(srv.cfg)
				seen = &answers{}
				cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { seen.next = rt; return seen })
				hc, err := rest.HTTPClientFor(cfg)
				Expect(err).NotTo(HaveOccurred())
				writer, err = workapply.NewMetadataWriter(cfg, hc)
				Expect(err).NotTo(HaveOccurred())
			})

			fixture := func(name string) *workv1alpha1.Work {
				w := &workv1alpha1.Work{}
				loadTyped("work.yaml", w)
				w.Name = name
				return w
			}
			stored := func(name string) *unstructured.Unstructured {
				u := &unstructured.Unstructured{}
				u.SetAPIVersion(workv1alpha1.GroupVersion.String())
				u.SetKind("Work")
				Expect(srv.c.Get(ctx, client.ObjectKey{Namespace: "karmada-es-member1", Name: name}, u)).To(Succeed())
				return u
			}

			It("stores the Work a controller-runtime client stores, and answers with its metadata", func() {
				ensureNamespace(ctx, srv.c, "karmada-es-member1")
				Expect(srv.c.Create(ctx, fixture("by-client"))).To(Succeed())

				got, err := writer.Create(ctx, fixture("by-writer"))
				Expect(err).NotTo(HaveOccurred())

				answer := seen.last()
				Expect(answer).To(HaveKeyWithValue("kind", "PartialObjectMetadata"))
				Expect(answer).NotTo(HaveKey("spec"), "the answer carries no manifests")

				byWriter, byClient := stored("by-writer"), stored("by-client")
				Expect(got.GetUID()).To(Equal(byWriter.GetUID()))
				Expect(got.GetGeneration()).To(Equal(int64(1)))
				Expect(got.GetLabels()).To(Equal(byWriter.GetLabels()))
				Expect(got.GetAnnotations()).To(Equal(byWriter.GetAnnotations()))
				Expect(byWriter.Object["spec"]).To(Equal(byClient.Object["spec"]))
				Expect(byWriter.GetLabels()).To(Equal(byClient.GetLabels()))
				Expect(byWriter.GetAnnotations()).To(Equal(byClient.GetAnnotations()))
				Expect(byWriter.GetFinalizers()).To(Equal(byClient.GetFinalizers()))
				Expect(managers(byWriter)).To(Equal(managers(byClient)), "the same field manager writes both")
			})

			It("updates at the Work's resourceVersion and answers with the new generation", func() {
				w := fixture("by-writer")
				Expect(srv.c.Get(ctx, client.ObjectKeyFromObject(w), w)).To(Succeed())
				w.Spec.SuspendDispatching = nil
				got, err := writer.Update(ctx, w)
				Expect(err).NotTo(HaveOccurred())
				Expect(seen.last()).To(HaveKeyWithValue("kind", "PartialObjectMetadata"))
				Expect(got.GetGeneration()).To(Equal(int64(2)))
				Expect(got.GetResourceVersion()).To(Equal(stored("by-writer").GetResourceVersion()))
				Expect(stored("by-writer").Object["spec"]).NotTo(HaveKey("suspendDispatching"))

				By("a stale resourceVersion is a conflict, as through any client")
				_, err = writer.Update(ctx, w)
				Expect(apierrors.IsConflict(err)).To(BeTrue(), "got %v", err)
			})

			It("keeps the API server's errors as they are, its messages included", func() {
				// The messages are the API server's own, not the generic text client-go
				// makes of a bare status code: the binding's condition quotes them.
				_, err := writer.Create(ctx, fixture("by-writer"))
				Expect(apierrors.IsAlreadyExists(err)).To(BeTrue(), "got %v", err)
				Expect(err.Error()).To(Equal(`works.work.karmada.io "by-writer" already exists`))

				w := fixture("elsewhere")
				w.Namespace = "karmada-es-nowhere"
				_, err = writer.Create(ctx, w)
				Expect(apierrors.IsNotFound(err)).To(BeTrue(), "got %v", err)
				Expect(err.Error()).To(Equal(`namespaces "karmada-es-nowhere" not found`))

				_, err = writer.Create(ctx, fixture("Not_A_Name"))
				Expect(apierrors.IsInvalid(err)).To(BeTrue(), "got %v", err)
				Expect(err.Error()).To(ContainSubstring(`metadata.name: Invalid value: "Not_A_Name"`))
			})
		})
	}
})

func managers(u *unstructured.Unstructured) []string {
	var out []string
	for _, f := range u.GetManagedFields() {
		out = append(out, f.Manager+" "+string(f.Operation))
	}
	return out
}
