// Package workapply writes desired Works to the API server, one cluster at a time, and
// says per cluster what happened, so one cluster's failure is reported and never
// stops the others.
package workapply

import (
	"errors"
	"fmt"

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

// BeingDeletedError says a Work cannot be written because it is terminating.
type BeingDeletedError struct {
	Work types.NamespacedName
}

func (e *BeingDeletedError) Error() string {
	return fmt.Sprintf("work %s is being deleted", e.Work)
}

// IsBeingDeleted tells whether err, or an error it wraps, is a BeingDeletedError.
func IsBeingDeleted(err error) bool {
	var target *BeingDeletedError
	return errors.As(err, &target)
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
