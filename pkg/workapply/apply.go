package workapply

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
)

// Applier creates, updates and deletes Works.
type Applier struct {
	// Client reads from the informer cache and writes to the API server.
	Client client.Client
	// Reader reads from the API server itself; used only when the cache proved stale.
	Reader client.Reader
}

// ownershipAnnotations name the binding a Work belongs to.
var ownershipAnnotations = []string{
	workv1alpha2.ResourceBindingNamespaceAnnotation,
	workv1alpha2.ResourceBindingNameAnnotation,
	workv1alpha2.ClusterResourceBindingNameAnnotation,
}

// Apply makes cluster's Work match desired. A Work that does not exist yet costs exactly
// one request: it is created without being read first.
func (a *Applier) Apply(ctx context.Context, cluster string, desired *workv1alpha1.Work) Result {
	key := client.ObjectKeyFromObject(desired)
	result := Result{Cluster: cluster, Work: key}
	logger := log.FromContext(ctx).WithValues("cluster", cluster, "work", key.String())

	existing := &workv1alpha1.Work{}
	err := a.Client.Get(ctx, key, existing)
	switch {
	case apierrors.IsNotFound(err):
		result.Outcome, result.Err = a.create(ctx, desired)
	case err != nil:
		result.Outcome, result.Err = Failed, err
	default:
		result.Outcome, result.Err = a.update(ctx, existing, desired)
	}
	if result.Err != nil {
		if result.Outcome != Blocked {
			result.Outcome = Failed
			result.Err = wrap(cluster, key, result.Err)
		}
		logger.V(1).Info("Work not synced", "outcome", result.Outcome, "error", result.Err.Error())
		return result
	}
	logger.V(2).Info("Work synced", "outcome", result.Outcome)
	return result
}

func (a *Applier) create(ctx context.Context, desired *workv1alpha1.Work) (Outcome, error) {
	err := a.Client.Create(ctx, desired.DeepCopy())
	if err == nil {
		return Created, nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return Failed, fmt.Errorf("creating: %w", err)
	}
	// The cache had not seen it yet: read it live and update from there.
	existing := &workv1alpha1.Work{}
	if err := a.Reader.Get(ctx, client.ObjectKeyFromObject(desired), existing); err != nil {
		return Failed, fmt.Errorf("reading after AlreadyExists: %w", err)
	}
	return a.update(ctx, existing, desired)
}

// update brings existing to desired. It never writes a terminating Work or one the
// binding does not own, and retries with a live read when another writer got there first.
func (a *Applier) update(ctx context.Context, existing, desired *workv1alpha1.Work) (Outcome, error) {
	outcome := Unchanged
	first := true
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if !first {
			if err := a.Reader.Get(ctx, client.ObjectKeyFromObject(desired), existing); err != nil {
				return err
			}
		}
		first = false
		if existing.DeletionTimestamp != nil {
			outcome = Blocked
			return &BeingDeletedError{Work: client.ObjectKeyFromObject(existing), UID: existing.UID,
				Since: existing.DeletionTimestamp.Time, Finalizers: slices.Clone(existing.Finalizers)}
		}
		if err := checkOwner(existing, desired); err != nil {
			outcome = Failed
			return err
		}
		if UpToDate(existing, desired) {
			outcome = Unchanged
			return nil
		}
		updated := existing.DeepCopy()
		mergeDesired(updated, desired)
		outcome = Updated
		return a.Client.Update(ctx, updated)
	})
	if apierrors.IsNotFound(err) {
		// Gone between the read and the write: it can simply be created.
		return a.create(ctx, desired)
	}
	if err != nil && outcome == Updated {
		return Failed, fmt.Errorf("updating: %w", err)
	}
	return outcome, err
}

// Delete removes work unless it is already on its way out.
func (a *Applier) Delete(ctx context.Context, cluster string, work *workv1alpha1.Work) Result {
	key := client.ObjectKeyFromObject(work)
	result := Result{Cluster: cluster, Work: key, Outcome: Deleted}
	if work.DeletionTimestamp != nil {
		result.Outcome = Unchanged
		return result
	}
	err := a.Client.Delete(ctx, work, client.Preconditions{UID: ptr.To(work.UID)})
	switch {
	case apierrors.IsNotFound(err):
		result.Outcome = Unchanged
	case apierrors.IsConflict(err):
		// The UID precondition failed: the Work was recreated under the same name, so
		// this one is already gone.
		result.Outcome = Unchanged
	case err != nil:
		result.Outcome = Failed
		result.Err = fmt.Errorf("cluster %s: deleting work %s: %w", cluster, key, err)
	default:
		log.FromContext(ctx).V(1).Info("Deleted work", "cluster", cluster, "work", key.String())
	}
	return result
}

func wrap(cluster string, key types.NamespacedName, err error) error {
	return fmt.Errorf("cluster %s: work %s: %w", cluster, key, err)
}

// checkOwner refuses a Work that names no binding (someone else's) or another binding.
func checkOwner(existing, desired *workv1alpha1.Work) error {
	named, same := false, true
	for _, key := range ownershipAnnotations {
		got, has := existing.Annotations[key]
		want, wanted := desired.Annotations[key]
		named = named || has
		same = same && has == wanted && got == want
	}
	switch {
	case !named:
		return &NotOwnedError{Work: client.ObjectKeyFromObject(existing)}
	case !same:
		return &NotOwnedError{Work: client.ObjectKeyFromObject(existing), Owner: ownerOf(existing)}
	}
	return nil
}

func ownerOf(work *workv1alpha1.Work) string {
	if name, ok := work.Annotations[workv1alpha2.ClusterResourceBindingNameAnnotation]; ok {
		return "ClusterResourceBinding " + name
	}
	return fmt.Sprintf("ResourceBinding %s/%s", work.Annotations[workv1alpha2.ResourceBindingNamespaceAnnotation],
		work.Annotations[workv1alpha2.ResourceBindingNameAnnotation])
}

// UpToDate tells whether existing already holds everything desired asks for. Labels,
// annotations and finalizers that others added are not drift.
func UpToDate(existing, desired *workv1alpha1.Work) bool {
	for _, f := range desired.Finalizers {
		if !slices.Contains(existing.Finalizers, f) {
			return false
		}
	}
	if !containsAll(existing.Labels, desired.Labels) || !containsAll(existing.Annotations, desired.Annotations) {
		return false
	}
	if ptr.Deref(existing.Spec.SuspendDispatching, false) != ptr.Deref(desired.Spec.SuspendDispatching, false) ||
		ptr.Deref(existing.Spec.PreserveResourcesOnDeletion, false) != ptr.Deref(desired.Spec.PreserveResourcesOnDeletion, false) {
		return false
	}
	return sameManifests(existing.Spec.Workload.Manifests, desired.Spec.Workload.Manifests)
}

func containsAll(have, want map[string]string) bool {
	for k, v := range want {
		if got, ok := have[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// sameManifests compares manifests as JSON values: the API server may reorder keys.
func sameManifests(a, b []workv1alpha1.Manifest) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if bytes.Equal(a[i].Raw, b[i].Raw) {
			continue
		}
		var x, y any
		if json.Unmarshal(a[i].Raw, &x) != nil || json.Unmarshal(b[i].Raw, &y) != nil || !reflect.DeepEqual(x, y) {
			return false
		}
	}
	return true
}

// mergeDesired writes desired's content into work, keeping what others added.
func mergeDesired(work, desired *workv1alpha1.Work) {
	for _, f := range desired.Finalizers {
		if !slices.Contains(work.Finalizers, f) {
			work.Finalizers = append(work.Finalizers, f)
		}
	}
	work.Labels = overlay(work.Labels, desired.Labels)
	work.Annotations = overlay(work.Annotations, desired.Annotations)
	work.Spec = *desired.Spec.DeepCopy()
}

func overlay(base, extra map[string]string) map[string]string {
	if base == nil && len(extra) > 0 {
		base = make(map[string]string, len(extra))
	}
	for k, v := range extra {
		base[k] = v
	}
	return base
}
