// SPDX-License-Identifier: Apache-2.0

package soaker

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
)

// Workload creates, changes and deletes Deployments and their ResourceBindings in one
// namespace, as Karmada's detector and scheduler would. It is safe for concurrent use.
type Workload struct {
	Client    client.Client
	Namespace string
	Members   []string

	mu   sync.Mutex
	rng  *rand.Rand
	live map[string]bool
}

// NewWorkload returns a Workload of namespace ns (which must exist) over members, its
// random choices drawn from seed.
func NewWorkload(c client.Client, ns string, members []string, seed uint64) *Workload {
	return &Workload{Client: c, Namespace: ns, Members: slices.Clone(members),
		rng: rand.New(rand.NewPCG(seed, seed^0x5eed)), live: map[string]bool{}}
}

// BindingName is the ResourceBinding of Deployment name, as Karmada's detector names it.
func BindingName(name string) string { return name + "-deployment" }

// Intn returns a random int in [0, n).
func (w *Workload) Intn(n int) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.rng.IntN(n)
}

// Between returns a random int in [lo, hi].
func (w *Workload) Between(lo, hi int) int { return lo + w.Intn(hi-lo+1) }

// RandomClusters picks between 1 and all members, in members order.
func (w *Workload) RandomClusters() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 1 + w.rng.IntN(len(w.Members))
	picked := slices.Clone(w.Members)
	w.rng.Shuffle(len(picked), func(i, j int) { picked[i], picked[j] = picked[j], picked[i] })
	picked = picked[:n]
	sort.Slice(picked, func(i, j int) bool { return slices.Index(w.Members, picked[i]) < slices.Index(w.Members, picked[j]) })
	return picked
}

// targets gives each cluster 1–3 replicas and returns them with their sum.
func (w *Workload) targets(clusters []string) ([]workv1alpha2.TargetCluster, int32) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var sum int32
	out := make([]workv1alpha2.TargetCluster, 0, len(clusters))
	for _, c := range clusters {
		r := int32(1 + w.rng.IntN(3))
		sum += r
		out = append(out, workv1alpha2.TargetCluster{Name: c, Replicas: r})
	}
	return out, sum
}

func (w *Workload) permanentID() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return fmt.Sprintf("id-%016x", w.rng.Uint64())
}

// Live returns the names whose binding was created and not deleted since, sorted.
func (w *Workload) Live() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]string, 0, len(w.live))
	for n := range w.live {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// IsLive tells whether name's binding was created and not deleted since.
func (w *Workload) IsLive(name string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.live[name]
}

// RandomLive returns a random live name, or "" when there is none.
func (w *Workload) RandomLive() string {
	live := w.Live()
	if len(live) == 0 {
		return ""
	}
	return live[w.Intn(len(live))]
}

// Deployment returns the template Deployment name.
func (w *Workload) Deployment(name string) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: w.Namespace},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx:1.27"}}},
			},
		},
	}
}

// Create creates Deployment name (unless it exists) and its ResourceBinding to clusters
// (random ones when nil), each cluster getting 1–3 replicas. It fails with an
// AlreadyExists error while an earlier binding of the name is still being deleted.
func (w *Workload) Create(ctx context.Context, name string, clusters []string) error {
	if clusters == nil {
		clusters = w.RandomClusters()
	}
	if err := w.Client.Create(ctx, w.Deployment(name)); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating Deployment %s/%s: %w", w.Namespace, name, err)
	}
	targets, sum := w.targets(clusters)
	rb := &workv1alpha2.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Name: BindingName(name), Namespace: w.Namespace,
			Labels: map[string]string{workv1alpha2.ResourceBindingPermanentIDLabel: w.permanentID()}},
		Spec: workv1alpha2.ResourceBindingSpec{
			Resource: workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: w.Namespace, Name: name},
			Replicas: sum,
			Clusters: targets,
		},
	}
	if err := w.Client.Create(ctx, rb); err != nil {
		return fmt.Errorf("creating ResourceBinding %s/%s: %w", w.Namespace, rb.Name, err)
	}
	w.mu.Lock()
	w.live[name] = true
	w.mu.Unlock()
	return nil
}

// Update reschedules name's binding to clusters (random ones when nil) with new
// replicas: a merge patch of spec.clusters and spec.replicas, as the scheduler writes.
// The new schedule always differs from the old one, so the binding's generation moves.
func (w *Workload) Update(ctx context.Context, name string, clusters []string) error {
	random := clusters == nil
	rb := &workv1alpha2.ResourceBinding{}
	if err := w.Client.Get(ctx, client.ObjectKey{Namespace: w.Namespace, Name: BindingName(name)}, rb); err != nil {
		return fmt.Errorf("reading ResourceBinding %s/%s: %w", w.Namespace, BindingName(name), err)
	}
	base := rb.DeepCopy()
	for {
		if random {
			clusters = w.RandomClusters()
		}
		rb.Spec.Clusters, rb.Spec.Replicas = w.targets(clusters)
		if !equality.Semantic.DeepEqual(rb.Spec.Clusters, base.Spec.Clusters) {
			break
		}
	}
	if err := w.Client.Patch(ctx, rb, client.MergeFrom(base)); err != nil {
		return fmt.Errorf("patching ResourceBinding %s/%s: %w", w.Namespace, rb.Name, err)
	}
	return nil
}

// Delete deletes name's binding and Deployment; either being gone already is fine.
func (w *Workload) Delete(ctx context.Context, name string) error {
	rb := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: w.Namespace, Name: BindingName(name)}}
	if err := w.Client.Delete(ctx, rb); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting ResourceBinding %s/%s: %w", w.Namespace, rb.Name, err)
	}
	w.mu.Lock()
	delete(w.live, name)
	w.mu.Unlock()
	if err := w.Client.Delete(ctx, w.Deployment(name)); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting Deployment %s/%s: %w", w.Namespace, name, err)
	}
	return nil
}
