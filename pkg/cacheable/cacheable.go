// SPDX-License-Identifier: Apache-2.0

// Package cacheable tells whether resource templates of a kind can be read through the
// informer cache. The cache lists and watches a kind the first time one of its objects is
// read, and waits for that list to finish. A kind that cannot be listed or watched, such
// as a create-only review kind (authorization.k8s.io SubjectAccessReview) or one the
// controller's RBAC may not list, never finishes: the read would wait for good and hold a
// worker with it. Such a kind is refused before the cache is asked.
package cacheable

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// neededVerbs are what an informer does with a kind.
var neededVerbs = []string{"get", "list", "watch"}

// refusalMemory is how long a refusal is believed before the API server is asked again: an
// operator may grant the missing permission, and a binding that changes after that should
// find it. A kind found readable stays so for the life of the process.
const refusalMemory = time.Minute

// Kinds remembers, per resource, whether the informer cache can serve it.
type Kinds struct {
	discovery discovery.DiscoveryInterface
	// reader reads from the API server itself: it is how a list is tried without an informer.
	reader client.Reader
	now    func() time.Time

	mu       sync.Mutex
	verdicts map[schema.GroupVersionResource]verdict
	// asking makes the workers that meet a new kind at once ask the API server once.
	asking singleflight.Group
}

type verdict struct {
	refusal *Refusal // nil: readable
	at      time.Time
}

// NewKinds returns a Kinds that asks d for each resource's verbs and tries one list of it
// through reader, an uncached client.
func NewKinds(d discovery.DiscoveryInterface, reader client.Reader) *Kinds {
	return &Kinds{discovery: d, reader: reader, now: time.Now, verdicts: map[schema.GroupVersionResource]verdict{}}
}

// Refusal is a kind the cache cannot serve; retrying will not help until the API server or
// the controller's permissions change.
type Refusal struct {
	GVK    schema.GroupVersionKind
	Reason string
}

func (e *Refusal) Error() string {
	return fmt.Sprintf("%s cannot be cached: %s", e.GVK, e.Reason)
}

// Check returns nil when the cache can list and watch mapping's resource, a *Refusal when
// it cannot, and any other error when the API server could not say.
func (k *Kinds) Check(ctx context.Context, mapping *meta.RESTMapping) error {
	if k == nil {
		return nil
	}
	gvr := mapping.Resource
	k.mu.Lock()
	v, known := k.verdicts[gvr]
	k.mu.Unlock()
	if !known || (v.refusal != nil && k.now().Sub(v.at) >= refusalMemory) {
		asked, err, _ := k.asking.Do(gvr.String(), func() (any, error) {
			refusal, err := k.ask(ctx, mapping)
			if err != nil {
				return nil, err
			}
			v := verdict{refusal: refusal, at: k.now()}
			k.mu.Lock()
			k.verdicts[gvr] = v
			k.mu.Unlock()
			return v, nil
		})
		if err != nil {
			return err
		}
		v = asked.(verdict)
	}
	if v.refusal != nil {
		return v.refusal
	}
	return nil
}

// ask looks up the resource's verbs, then lists one object of it as the informer would.
func (k *Kinds) ask(ctx context.Context, mapping *meta.RESTMapping) (*Refusal, error) {
	gvk, gvr := mapping.GroupVersionKind, mapping.Resource
	resources, err := k.discovery.ServerResourcesForGroupVersion(gvr.GroupVersion().String())
	if err != nil {
		return nil, fmt.Errorf("discovering the verbs of %s: %w", gvr, err)
	}
	i := slices.IndexFunc(resources.APIResources, func(r metav1.APIResource) bool { return r.Name == gvr.Resource })
	if i < 0 {
		return &Refusal{GVK: gvk, Reason: fmt.Sprintf("the API server lists no resource %q in %s", gvr.Resource, gvr.GroupVersion())}, nil
	}
	verbs := resources.APIResources[i].Verbs
	for _, verb := range neededVerbs {
		if !slices.Contains(verbs, verb) {
			return &Refusal{GVK: gvk, Reason: fmt.Sprintf("the API server does not allow %s on %s (verbs: %v)", verb, gvr.GroupResource(), []string(verbs))}, nil
		}
	}

	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	err = k.reader.List(ctx, list, client.Limit(1))
	switch {
	case apierrors.IsForbidden(err), apierrors.IsMethodNotSupported(err):
		return &Refusal{GVK: gvk, Reason: fmt.Sprintf("the controller may not list %s: %v", gvr.GroupResource(), err)}, nil
	case err != nil:
		return nil, fmt.Errorf("listing %s: %w", gvr, err)
	}
	return nil, nil
}
