// SPDX-License-Identifier: Apache-2.0

package interpreter

import (
	"errors"
	"fmt"

	configv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/config/v1alpha1"
	"github.com/binding-controller/binding-controller/pkg/interpreter/luavm"
)

// Reason is the failure reason of a cluster whose Work failed in the interpreter, as
// metrics and the WorksSynced condition name it.
const Reason = "InterpreterFailed"

// Error is a hook's failure to interpret one cluster's copy of a resource.
type Error struct {
	Operation configv1alpha1.InterpreterOperation
	// Hook names what ran: `ResourceInterpreterCustomization "name"`, a bundled
	// customization, or a webhook.
	Hook    string
	Object  string
	Cluster string
	Err     error
	// transient is a failure that a retry may not meet again: a customization that could
	// not be read, any webhook failure.
	transient bool
}

func (e *Error) Error() string {
	return fmt.Sprintf("cluster %s: %s of %s by %s failed: %v", e.Cluster, e.Operation, e.Object, e.Hook, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// FailureReason is Reason.
func (e *Error) FailureReason() string { return Reason }

// Transient tells whether a retry may succeed with the same inputs: only the clock's
// limits (a busy process) are. A script that fails otherwise (a syntax error, error(), a
// wrong result, one of the sandbox's bounds, which count the same on every run) fails the
// same way until the customization or the resource changes, and either change syncs the
// binding again.
func (e *Error) Transient() bool {
	return e.transient || errors.Is(e.Err, luavm.ErrTimeout) || errors.Is(e.Err, luavm.ErrAbandoned)
}
