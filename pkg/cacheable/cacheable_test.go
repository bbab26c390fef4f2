// SPDX-License-Identifier: Apache-2.0

package cacheable

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fakediscovery "k8s.io/client-go/discovery/fake"
	clienttesting "k8s.io/client-go/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

var (
	deployments = &meta.RESTMapping{
		GroupVersionKind: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"},
		Resource:         schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"},
	}
	reviews = &meta.RESTMapping{
		GroupVersionKind: schema.GroupVersionKind{Group: "authorization.k8s.io", Version: "v1", Kind: "SubjectAccessReview"},
		Resource:         schema.GroupVersionResource{Group: "authorization.k8s.io", Version: "v1", Resource: "subjectaccessreviews"},
	}
	secrets = &meta.RESTMapping{
		GroupVersionKind: schema.GroupVersionKind{Version: "v1", Kind: "Secret"},
		Resource:         schema.GroupVersionResource{Version: "v1", Resource: "secrets"},
	}
)

func discoveryOf() *fakediscovery.FakeDiscovery {
	d := &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{}}
	d.Resources = []*metav1.APIResourceList{
		{GroupVersion: "apps/v1", APIResources: []metav1.APIResource{
			{Name: "deployments", Kind: "Deployment", Verbs: metav1.Verbs{"create", "delete", "get", "list", "patch", "update", "watch"}}}},
		{GroupVersion: "authorization.k8s.io/v1", APIResources: []metav1.APIResource{
			{Name: "subjectaccessreviews", Kind: "SubjectAccessReview", Verbs: metav1.Verbs{"create"}}}},
		{GroupVersion: "v1", APIResources: []metav1.APIResource{
			{Name: "secrets", Kind: "Secret", Verbs: metav1.Verbs{"get", "list", "watch"}}}},
	}
	return d
}

// listing counts lists and refuses those of secrets, as RBAC would.
func listing(lists *int) client.Reader {
	return fake.NewClientBuilder().WithScheme(runtime.NewScheme()).WithInterceptorFuncs(interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			*lists++
			if list.GetObjectKind().GroupVersionKind().Kind == "SecretList" {
				return apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "", errors.New(`User "binding-controller" cannot list resource "secrets"`))
			}
			return nil
		},
	}).Build()
}

func TestAKindThatCanBeListedAndWatchedIsReadable(t *testing.T) {
	lists := 0
	k := NewKinds(discoveryOf(), listing(&lists))
	for range 3 {
		if err := k.Check(context.Background(), deployments); err != nil {
			t.Fatal(err)
		}
	}
	if lists != 1 {
		t.Errorf("%d probe lists, want 1: a readable kind is asked about once", lists)
	}
}

func TestWorkersMeetingANewKindAtOnceAskOnce(t *testing.T) {
	var lists atomic.Int32
	reader := fake.NewClientBuilder().WithScheme(runtime.NewScheme()).WithInterceptorFuncs(interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			lists.Add(1)
			time.Sleep(20 * time.Millisecond) // a round trip, long enough for the others to arrive
			return nil
		},
	}).Build()
	k := NewKinds(discoveryOf(), reader)
	var wg sync.WaitGroup
	for range 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := k.Check(context.Background(), deployments); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if n := lists.Load(); n != 1 {
		t.Errorf("%d probe lists by 5 workers meeting Deployments at once, want 1", n)
	}
}

func TestACreateOnlyKindIsRefusedWithoutAList(t *testing.T) {
	lists := 0
	k := NewKinds(discoveryOf(), listing(&lists))
	err := k.Check(context.Background(), reviews)
	var refusal *Refusal
	if !errors.As(err, &refusal) {
		t.Fatalf("Check = %v, want a *Refusal", err)
	}
	want := "authorization.k8s.io/v1, Kind=SubjectAccessReview cannot be cached: the API server does not allow get on subjectaccessreviews.authorization.k8s.io (verbs: [create])"
	if err.Error() != want {
		t.Errorf("Check = %q, want %q", err, want)
	}
	if lists != 0 {
		t.Errorf("%d lists of a kind that cannot be listed", lists)
	}
}

func TestAKindTheControllerMayNotListIsRefusedAndAskedAgainLater(t *testing.T) {
	lists := 0
	k := NewKinds(discoveryOf(), listing(&lists))
	now := time.Now()
	k.now = func() time.Time { return now }
	for range 2 {
		err := k.Check(context.Background(), secrets)
		var refusal *Refusal
		if !errors.As(err, &refusal) || !strings.Contains(err.Error(), "the controller may not list secrets") {
			t.Fatalf("Check = %v, want a refusal saying the controller may not list secrets", err)
		}
	}
	if lists != 1 {
		t.Fatalf("%d lists, want 1 while the refusal is remembered", lists)
	}
	now = now.Add(refusalMemory)
	_ = k.Check(context.Background(), secrets)
	if lists != 2 {
		t.Errorf("%d lists, want 2: a refusal is asked again once it is %s old (RBAC may have been granted)", lists, refusalMemory)
	}
}

func TestDiscoveryFailureIsNoRefusal(t *testing.T) {
	lists := 0
	k := NewKinds(brokenDiscovery{FakeDiscovery: discoveryOf()}, listing(&lists))
	err := k.Check(context.Background(), deployments)
	var refusal *Refusal
	if err == nil || errors.As(err, &refusal) {
		t.Fatalf("Check = %v, want a plain error: the API server could not say, so it is retried", err)
	}
}

type brokenDiscovery struct{ *fakediscovery.FakeDiscovery }

func (brokenDiscovery) ServerResourcesForGroupVersion(string) (*metav1.APIResourceList, error) {
	return nil, errors.New("connection refused")
}
