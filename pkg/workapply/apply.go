// SPDX-License-Identifier: Apache-2.0

package workapply

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	policyv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/policy/v1alpha1"
	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
)

// Applier creates, updates and deletes Works.
type Applier struct {
	// Client reads Work metadata from the informer cache and deletes Works (and creates
	// and updates them when Writer is nil).
	Client client.Client
	// Reader reads whole Works from the API server itself, when the cache cannot tell
	// whether a Work is current.
	Reader client.Reader
	// Ledger remembers what this process wrote, so a current Work costs no request at all.
	Ledger *Ledger
	// Writer creates and updates Works; nil writes through Client.
	Writer Writer
	// Uncached says the Work cache has not synced yet: Apply reads each Work whole through
	// Reader, once, instead of its metadata and then, to update it, the whole of it. The
	// Works it is asked for then belong to a changed binding and mostly need writing.
	Uncached bool
}

func (a *Applier) writer() Writer {
	if a.Writer != nil {
		return a.Writer
	}
	return clientWriter{c: a.Client}
}

// ownershipAnnotations name the binding a Work belongs to.
var ownershipAnnotations = []string{
	workv1alpha2.ResourceBindingNamespaceAnnotation,
	workv1alpha2.ResourceBindingNameAnnotation,
	workv1alpha2.ClusterResourceBindingNameAnnotation,
}

// WorkMetadata returns an empty metadata-only Work, the form in which Works are cached.
func WorkMetadata() *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(workv1alpha1.GroupVersion.WithKind("Work"))
	return m
}

// WorkMetadataList returns an empty metadata-only Work list.
func WorkMetadataList() *metav1.PartialObjectMetadataList {
	l := &metav1.PartialObjectMetadataList{}
	l.SetGroupVersionKind(workv1alpha1.GroupVersion.WithKind("WorkList"))
	return l
}

// Apply makes cluster's Work match desired. A Work that does not exist yet costs exactly
// one request: it is created without being read first. A Work this process wrote and
// nobody changed since costs none: the cached metadata and the ledger vouch for it.
func (a *Applier) Apply(ctx context.Context, cluster string, desired *workv1alpha1.Work) Result {
	key := client.ObjectKeyFromObject(desired)
	result := Result{Cluster: cluster, Work: key}
	logger := log.FromContext(ctx).WithValues("cluster", cluster, "work", key.String())

	if a.Uncached {
		result.Outcome, result.Err = a.readAndUpdate(ctx, desired)
	} else {
		result.Outcome, result.Err = a.applyFromCache(ctx, key, desired)
	}
	if result.Err != nil {
		if refusedAsTooLarge(result.Err) {
			size, _ := json.Marshal(desired)
			result.Err = &TooLargeError{Bytes: len(size), Err: result.Err}
		}
		switch {
		case result.Outcome == Blocked:
		case isTyped(result.Err):
			// These already name the Work.
			result.Outcome = Failed
			result.Err = fmt.Errorf("cluster %s: %w", cluster, result.Err)
		default:
			result.Outcome = Failed
			result.Err = wrap(cluster, key, result.Err)
		}
		logger.V(1).Info("Work not synced", "outcome", result.Outcome, "error", result.Err.Error())
		return result
	}
	logger.V(2).Info("Work synced", "outcome", result.Outcome)
	return result
}

// applyFromCache decides from the cached metadata and the ledger what desired needs: a
// create, nothing, or a read of the whole Work and maybe an update.
func (a *Applier) applyFromCache(ctx context.Context, key client.ObjectKey, desired *workv1alpha1.Work) (Outcome, error) {
	cached := WorkMetadata()
	err := a.Client.Get(ctx, key, cached)
	switch {
	case apierrors.IsNotFound(err):
		return a.create(ctx, desired)
	case err != nil:
		return Failed, err
	case cached.DeletionTimestamp != nil:
		return Blocked, beingDeleted(cached)
	case checkOwner(cached, desired) != nil:
		return Failed, checkOwner(cached, desired)
	case a.vouchedFor(cached, asAdmitted(desired, cached.Labels)):
		return Unchanged, nil
	}
	return a.readAndUpdate(ctx, desired)
}

// vouchedFor tells whether the cached metadata and the ledger show the Work as admitted.
func (a *Applier) vouchedFor(cached metav1.Object, admitted *workv1alpha1.Work) bool {
	return metadataHolds(cached, admitted) && a.Ledger.current(cached, specHash(&admitted.Spec))
}

// remember records a Work as the API server returned it after a write or read, with the
// hash of desired as admitted to that Work: what the next Apply computes from the cache.
func (a *Applier) remember(stored metav1.Object, desired *workv1alpha1.Work) {
	a.Ledger.remember(stored, specHash(&asAdmitted(desired, stored.GetLabels()).Spec))
}

func (a *Applier) create(ctx context.Context, desired *workv1alpha1.Work) (Outcome, error) {
	created, err := a.writer().Create(ctx, desired)
	if err == nil {
		a.remember(created, desired)
		return Created, nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return Failed, fmt.Errorf("creating: %w", err)
	}
	// The cache had not seen it yet: read it live and update from there.
	return a.readAndUpdate(ctx, desired)
}

// readAndUpdate brings the live Work to desired. It never writes a terminating Work or one
// the binding does not own, and retries with a fresh read when another writer got there first.
func (a *Applier) readAndUpdate(ctx context.Context, desired *workv1alpha1.Work) (Outcome, error) {
	outcome := Unchanged
	existing := &workv1alpha1.Work{}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := a.Reader.Get(ctx, client.ObjectKeyFromObject(desired), existing); err != nil {
			outcome = Failed
			return err
		}
		if existing.DeletionTimestamp != nil {
			outcome = Blocked
			return beingDeleted(existing)
		}
		if err := checkOwner(existing, desired); err != nil {
			outcome = Failed
			return err
		}
		admitted := asAdmitted(desired, existing.Labels)
		if UpToDate(existing, admitted) {
			outcome = Unchanged
			a.remember(existing, desired)
			return nil
		}
		updated := existing.DeepCopy()
		mergeDesired(updated, admitted)
		outcome = Updated
		stored, err := a.writer().Update(ctx, updated)
		if err != nil {
			return err
		}
		a.remember(stored, desired)
		return nil
	})
	switch {
	case apierrors.IsNotFound(err):
		// Gone between the cache and the API server: it can simply be created, once.
		created, err := a.writer().Create(ctx, desired)
		if err != nil {
			return Failed, fmt.Errorf("creating: %w", err)
		}
		a.remember(created, desired)
		return Created, nil
	case err != nil && outcome == Updated:
		return Failed, fmt.Errorf("updating: %w", err)
	case err != nil && outcome == Failed && !isTyped(err):
		return Failed, fmt.Errorf("reading: %w", err)
	}
	return outcome, err
}

// isTyped tells the errors this package makes, which already say what happened.
func isTyped(err error) bool {
	var notOwned *NotOwnedError
	return IsBeingDeleted(err) || errors.As(err, &notOwned)
}

func beingDeleted(work metav1.Object) *BeingDeletedError {
	return &BeingDeletedError{Work: types.NamespacedName{Namespace: work.GetNamespace(), Name: work.GetName()},
		UID: work.GetUID(), Since: work.GetDeletionTimestamp().Time, Finalizers: slices.Clone(work.GetFinalizers())}
}

// Delete removes work unless it is already on its way out.
func (a *Applier) Delete(ctx context.Context, cluster string, work *metav1.PartialObjectMetadata) Result {
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
		// this one is already gone; what the ledger knows of the new one stays.
		result.Outcome = Unchanged
	case err != nil:
		result.Outcome = Failed
		result.Err = fmt.Errorf("cluster %s: deleting work %s: %w", cluster, key, err)
		return result
	default:
		log.FromContext(ctx).V(1).Info("Deleted work", "cluster", cluster, "work", key.String())
	}
	a.Ledger.forget(key, work.UID)
	return result
}

func wrap(cluster string, key types.NamespacedName, err error) error {
	return fmt.Errorf("cluster %s: work %s: %w", cluster, key, err)
}

// checkOwner refuses a Work that names no binding (someone else's) or another binding.
func checkOwner(existing metav1.Object, desired *workv1alpha1.Work) error {
	named, same := false, true
	for _, key := range ownershipAnnotations {
		got, has := existing.GetAnnotations()[key]
		want, wanted := desired.Annotations[key]
		named = named || has
		same = same && has == wanted && got == want
	}
	switch {
	case !named:
		return &NotOwnedError{Work: keyOf(existing)}
	case !same:
		return &NotOwnedError{Work: keyOf(existing), Owner: ownerOf(existing)}
	}
	return nil
}

func ownerOf(work metav1.Object) string {
	a := work.GetAnnotations()
	if name, ok := a[workv1alpha2.ClusterResourceBindingNameAnnotation]; ok {
		return "ClusterResourceBinding " + name
	}
	return fmt.Sprintf("ResourceBinding %s/%s", a[workv1alpha2.ResourceBindingNamespaceAnnotation],
		a[workv1alpha2.ResourceBindingNameAnnotation])
}

func keyOf(o metav1.Object) types.NamespacedName {
	return types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}
}

// ownedLabels and ownedAnnotations are the Work metadata keys the binding controller
// writes: one of them that the desired Work does not carry (the overrides of a policy
// that went away, say) must go. Any other key belongs to someone else and stays.
var (
	ownedLabels = []string{
		workv1alpha2.ResourceBindingPermanentIDLabel,
		workv1alpha2.ClusterResourceBindingPermanentIDLabel,
	}
	ownedAnnotations = append(slices.Clone(ownershipAnnotations),
		workv1alpha1.ConflictResolutionAnnotation,
		policyv1alpha1.AppliedOverridesAnnotation,
		policyv1alpha1.AppliedClusterOverridesAnnotation,
	)
)

// OwnedMetadataChanged tells whether a change from old to new touched a label or
// annotation the binding controller writes, or took away the execution finalizer of a
// Work that is not being deleted (by hand: without it, deleting the Work would leave its
// workload running in the member cluster); others' keys are not its business.
func OwnedMetadataChanged(old, new metav1.Object) bool {
	finalizerTaken := new.GetDeletionTimestamp() == nil &&
		slices.Contains(old.GetFinalizers(), workv1alpha1.ExecutionControllerFinalizer) &&
		!slices.Contains(new.GetFinalizers(), workv1alpha1.ExecutionControllerFinalizer)
	return finalizerTaken || changed(old.GetLabels(), new.GetLabels(), ownedLabels) ||
		changed(old.GetAnnotations(), new.GetAnnotations(), ownedAnnotations)
}

func changed(a, b map[string]string, keys []string) bool {
	for _, k := range keys {
		va, oka := a[k]
		vb, okb := b[k]
		if oka != okb || va != vb {
			return true
		}
	}
	return false
}

// metadataHolds tells whether existing's labels, annotations and finalizers hold what
// desired asks for, and none of the keys the controller owns but no longer wants.
func metadataHolds(existing metav1.Object, desired *workv1alpha1.Work) bool {
	for _, f := range desired.Finalizers {
		if !slices.Contains(existing.GetFinalizers(), f) {
			return false
		}
	}
	return holds(existing.GetLabels(), desired.Labels, ownedLabels) &&
		holds(existing.GetAnnotations(), desired.Annotations, ownedAnnotations)
}

func holds(have, want map[string]string, owned []string) bool {
	for _, k := range owned {
		if _, wanted := want[k]; !wanted {
			if _, has := have[k]; has {
				return false
			}
		}
	}
	return containsAll(have, want)
}

// UpToDate tells whether existing already holds everything desired asks for.
func UpToDate(existing, desired *workv1alpha1.Work) bool {
	if !metadataHolds(existing, desired) {
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
	work.Labels = overlay(work.Labels, desired.Labels, ownedLabels)
	work.Annotations = overlay(work.Annotations, desired.Annotations, ownedAnnotations)
	work.Spec = *desired.Spec.DeepCopy()
}

// overlay writes extra into base, and drops the owned keys extra does not have.
func overlay(base, extra map[string]string, owned []string) map[string]string {
	for _, k := range owned {
		if _, wanted := extra[k]; !wanted {
			delete(base, k)
		}
	}
	if base == nil && len(extra) > 0 {
		base = make(map[string]string, len(extra))
	}
	for k, v := range extra {
		base[k] = v
	}
	return base
}
