// SPDX-License-Identifier: Apache-2.0

package bindingcontroller

import (
	"errors"

	"github.com/binding-controller/binding-controller/pkg/workapply"
)

// failureClass sorts failures by what can make them go away.
type failureClass int

const (
	transient        failureClass = iota // a retry may succeed
	awaitingDeletion                     // the terminating Work's deletion will unblock it
	badInput                             // only a change to the binding or its policies can fix it
)

// classify tells the failureClass of a failed result.
func classify(r workapply.Result) failureClass {
	var render *workapply.RenderError
	var noCluster *ClusterNotFoundError
	switch {
	case r.Outcome == workapply.Blocked:
		return awaitingDeletion
	case mayPassOnRetry(r.Err):
		return transient
	case errors.As(r.Err, &render), workapply.IsTooLarge(r.Err):
		return badInput
	case errors.As(r.Err, &noCluster):
		// The Cluster's creation re-syncs the binding: parked like bad input until then.
		return badInput
	}
	return transient
}

func anyFailed(results []workapply.Result, class failureClass) bool {
	for _, r := range results {
		if r.Err != nil && classify(r) == class {
			return true
		}
	}
	return false
}

// mayPassOnRetry tells a render failure that a retry may not meet again (an interpreter
// script past its time limit, customizations not readable) from bad input: a broken
// script fails the same way until its customization or the template changes, and both
// changes re-sync the binding, so it is parked like other bad input.
func mayPassOnRetry(err error) bool {
	var transient interface{ Transient() bool }
	return errors.As(err, &transient) && transient.Transient()
}
