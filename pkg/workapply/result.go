// SPDX-License-Identifier: Apache-2.0

// Package workapply writes desired Works to the API server, one cluster at a time, and
// says per cluster what happened, so one cluster's failure is reported and never
// stops the others.
package workapply

import (
	"errors"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

// Outcome is what applying or deleting one Work came to.
type Outcome string

const (
	Created   Outcome = "created"
	Updated   Outcome = "updated"
	Unchanged Outcome = "unchanged"
	Deleted   Outcome = "deleted"
	// Blocked: an earlier Work of the same name is still being deleted, so nothing can be
	// written until the execution side lets it go.
	Blocked Outcome = "blocked"
	Failed  Outcome = "failed"
)

// Result is the outcome for one cluster's Work. Err is set for Blocked and Failed.
type Result struct {
	Cluster string
	Work    types.NamespacedName
	Outcome Outcome
	Err     error
}

// Wrote tells whether the result changed anything on the API server.
func (r Result) Wrote() bool {
	return r.Outcome == Created || r.Outcome == Updated || r.Outcome == Deleted
}

// Failure reasons, as metrics and conditions name them. Errors from the API server are
// named by their status reason (Forbidden, NotFound, Invalid, …).
const (
	ReasonWorkBeingDeleted = "WorkBeingDeleted"
	ReasonWorkNotOwned     = "WorkNotOwned"
	ReasonRenderFailed     = "RenderFailed"
	ReasonWorkTooLarge     = "WorkTooLarge"
	ReasonPanic            = "Panic"
	ReasonUnknown          = "Unknown"
)

// Reason names why the cluster failed, or "" when it did not.
func (r Result) Reason() string {
	var notOwned *NotOwnedError
	var render *RenderError
	var tooLarge *TooLargeError
	var panicked *PanicError
	var named reasonNamer
	switch {
	case r.Err == nil:
		return ""
	case IsBeingDeleted(r.Err):
		return ReasonWorkBeingDeleted
	case errors.As(r.Err, &notOwned):
		return ReasonWorkNotOwned
	case errors.As(r.Err, &named):
		return named.FailureReason()
	case errors.As(r.Err, &render):
		return ReasonRenderFailed
	case errors.As(r.Err, &tooLarge):
		return ReasonWorkTooLarge
	case errors.As(r.Err, &panicked):
		return ReasonPanic
	}
	if reason := apierrors.ReasonForError(r.Err); reason != metav1.StatusReasonUnknown {
		return string(reason)
	}
	return ReasonUnknown
}

// reasonNamer is an error that names its own failure reason, such as the resource
// interpreter's (InterpreterFailed).
type reasonNamer interface{ FailureReason() string }

// RenderError says the cluster's Work could not be rendered, so nothing was written.
type RenderError struct {
	Cluster string
	Err     error
}

func (e *RenderError) Error() string {
	return fmt.Sprintf("cluster %s: rendering work: %v", e.Cluster, e.Err)
}
func (e *RenderError) Unwrap() error { return e.Err }

// RenderFailed is the result for a cluster whose Work could not be rendered.
func RenderFailed(cluster string, err error) Result {
	return Result{Cluster: cluster, Outcome: Failed, Err: &RenderError{Cluster: cluster, Err: err}}
}

// PanicError says syncing the cluster's Work panicked: a bug, caught so that it fails this
// cluster only. A retry may not hit it again (it may depend on timing or on what the API
// server answered), so it is retried like any transient failure.
type PanicError struct {
	Cluster string
	Work    types.NamespacedName
	// Value is what was passed to panic. It is not unwrapped even when it is an error: a
	// panic must not pass for the failure it happened to carry.
	Value any
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("cluster %s: panic while syncing work %s: %v", e.Cluster, e.Work, e.Value)
}

// Panicked is the result for a cluster whose sync panicked with value.
func Panicked(cluster string, work types.NamespacedName, value any) Result {
	return Result{Cluster: cluster, Work: work, Outcome: Failed, Err: &PanicError{Cluster: cluster, Work: work, Value: value}}
}

// TooLargeError says the API server could not store the Work: it is larger than etcd (by
// default 1.5 MiB a request) or the API server accepts. Retrying cannot help; only a
// change to the binding, its template or its policies can.
type TooLargeError struct {
	// Bytes is the size of the Work as JSON.
	Bytes int
	Err   error
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%v (the Work is %.2f MiB as JSON; etcd stores at most 1.5 MiB by default)", e.Err, float64(e.Bytes)/(1<<20))
}
func (e *TooLargeError) Unwrap() error { return e.Err }

// IsTooLarge tells whether err, or an error it wraps, is a TooLargeError.
func IsTooLarge(err error) bool {
	var target *TooLargeError
	return errors.As(err, &target)
}

// refusedAsTooLarge tells whether the API server refused a write for its size: 413 from
// the API server itself, or etcd's refusal, which reaches the client as an internal error
// carrying etcd's words.
func refusedAsTooLarge(err error) bool {
	if err == nil {
		return false
	}
	msg := err.Error()
	return apierrors.IsRequestEntityTooLargeError(err) ||
		strings.Contains(msg, "etcdserver: request is too large") ||
		strings.Contains(msg, "trying to send message larger than max")
}

// BeingDeletedError says a Work cannot be written because it is terminating.
type BeingDeletedError struct {
	Work types.NamespacedName
	UID  types.UID
	// Since is when its deletion began; Finalizers are what still holds it.
	Since      time.Time
	Finalizers []string
}

func (e *BeingDeletedError) Error() string {
	return fmt.Sprintf("work %s is being deleted", e.Work)
}

// IsBeingDeleted tells whether err, or an error it wraps, is a BeingDeletedError.
func IsBeingDeleted(err error) bool {
	_, ok := AsBeingDeleted(err)
	return ok
}

// AsBeingDeleted returns the BeingDeletedError in err's chain.
func AsBeingDeleted(err error) (*BeingDeletedError, bool) {
	var target *BeingDeletedError
	ok := errors.As(err, &target)
	return target, ok
}

// NotOwnedError says a Work of the desired name exists but belongs to someone else; it is
// left untouched.
type NotOwnedError struct {
	Work  types.NamespacedName
	Owner string
}

func (e *NotOwnedError) Error() string {
	if e.Owner == "" {
		return fmt.Sprintf("work %s exists and was not created by a binding; leaving it untouched", e.Work)
	}
	return fmt.Sprintf("work %s belongs to %s; leaving it untouched", e.Work, e.Owner)
}

// Aggregate returns the errors of results, in the results' order, as one error (nil when
// none failed). One error prints as itself, several as "[e1, e2]".
func Aggregate(results []Result) error {
	var errs []error
	for _, r := range results {
		if r.Err != nil {
			errs = append(errs, r.Err)
		}
	}
	return utilerrors.NewAggregate(errs)
}
