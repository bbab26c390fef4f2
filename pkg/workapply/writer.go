// SPDX-License-Identifier: Apache-2.0

package workapply

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
)

// Writer creates and updates Works. What comes back is only what the ledger keeps of a
// written Work: its metadata (UID, generation, labels the admission chain added).
type Writer interface {
	Create(ctx context.Context, work *workv1alpha1.Work) (metav1.Object, error)
	Update(ctx context.Context, work *workv1alpha1.Work) (metav1.Object, error)
}

// clientWriter writes through a controller-runtime client, which decodes the whole Work
// the API server answers with. It is what an Applier without a Writer uses.
type clientWriter struct{ c client.Client }

func (w clientWriter) Create(ctx context.Context, work *workv1alpha1.Work) (metav1.Object, error) {
	created := work.DeepCopy()
	if err := w.c.Create(ctx, created); err != nil {
		return nil, err
	}
	return created, nil
}

func (w clientWriter) Update(ctx context.Context, work *workv1alpha1.Work) (metav1.Object, error) {
	updated := work.DeepCopy()
	if err := w.c.Update(ctx, updated); err != nil {
		return nil, err
	}
	return updated, nil
}

// metadataAccept asks for the written Work as PartialObjectMetadata. The plain JSON
// after it is the fallback for an API server that cannot transform the answer; errors
// come back as a plain Status either way.
const metadataAccept = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"

// MetadataWriter writes whole Works and has the API server answer with their metadata
// only. A Work's answer is as large as the Work, manifests included; decoding it was
// the controller's largest single allocation per Work, and on a heap that holds the
// whole fleet each byte allocated costs the garbage collector more.
type MetadataWriter struct {
	rest      rest.Interface
	userAgent string
}

// NewMetadataWriter writes with cfg over hc, the manager's HTTP client, so that no new
// connections open. Its user agent, which names the Works' field manager, is the one a
// controller-runtime client of cfg sends.
func NewMetadataWriter(cfg *rest.Config, hc *http.Client) (*MetadataWriter, error) {
	c := rest.CopyConfig(cfg)
	if c.UserAgent == "" {
		c.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	c.GroupVersion = &workv1alpha1.GroupVersion
	c.APIPath = "/apis"
	c.ContentType = runtime.ContentTypeJSON
	c.AcceptContentTypes = metadataAccept
	// Decodes only error Statuses: a success's body is read as PartialObjectMetadata.
	c.NegotiatedSerializer = clientgoscheme.Codecs.WithoutConversion()
	rc, err := rest.RESTClientForConfigAndClient(c, hc)
	if err != nil {
		return nil, fmt.Errorf("a REST client for Works: %w", err)
	}
	return &MetadataWriter{rest: rc, userAgent: c.UserAgent}, nil
}

// Create creates work and returns its metadata as stored.
func (w *MetadataWriter) Create(ctx context.Context, work *workv1alpha1.Work) (metav1.Object, error) {
	body, err := encodeWork(work)
	if err != nil {
		return nil, err
	}
	return decodeMetadata(w.request(w.rest.Post().Namespace(work.Namespace).Resource("works"), body).Do(ctx))
}

// Update replaces work (at its resourceVersion) and returns its metadata as stored.
func (w *MetadataWriter) Update(ctx context.Context, work *workv1alpha1.Work) (metav1.Object, error) {
	body, err := encodeWork(work)
	if err != nil {
		return nil, err
	}
	return decodeMetadata(w.request(w.rest.Put().Namespace(work.Namespace).Resource("works").Name(work.Name), body).Do(ctx))
}

// request sets the user agent on the request itself: hc's transport adds one only when
// the config hc was built from had one.
func (w *MetadataWriter) request(r *rest.Request, body []byte) *rest.Request {
	return r.SetHeader("User-Agent", w.userAgent).SetHeader("Content-Type", runtime.ContentTypeJSON).Body(body)
}

// encodeWork is the request body a controller-runtime client would send: the Work with
// its apiVersion and kind.
func encodeWork(work *workv1alpha1.Work) ([]byte, error) {
	typed := *work
	typed.APIVersion, typed.Kind = workv1alpha1.GroupVersion.String(), "Work"
	body, err := json.Marshal(&typed)
	if err != nil {
		return nil, fmt.Errorf("encoding the Work: %w", err)
	}
	return body, nil
}

func decodeMetadata(res rest.Result) (metav1.Object, error) {
	if err := res.Error(); err != nil {
		// The Status the API server answered with, decoded (Raw alone would give a
		// generic error for the status code, without the server's message).
		return nil, err
	}
	raw, err := res.Raw()
	if err != nil {
		return nil, err
	}
	m := &metav1.PartialObjectMetadata{}
	if err := json.Unmarshal(raw, m); err != nil {
		return nil, fmt.Errorf("decoding the written Work's metadata: %w", err)
	}
	return m, nil
}
