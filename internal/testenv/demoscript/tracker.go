// SPDX-License-Identifier: Apache-2.0

package demoscript

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/binding-controller/binding-controller/internal/testenv/localplane"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
)

// workState is what the tracker last saw of one Work.
type workState struct {
	UID         types.UID
	PermanentID string
	Terminating bool
	// Since is when the Work was first seen in this state (UID, terminating).
	Since time.Time
}

// works is the demo's view of the Work tracker: the tracker stamps every change when its
// watch delivers it, so the demo can tell how long the controller took, to the
// millisecond, where polling would miss a short gap (an old Work gone and its successor
// created right after).
type works struct{ *localplane.WorkTracker }

// get returns the Work's state and whether it exists.
func (w works) get(key types.NamespacedName) (workState, bool) {
	st := w.Get(localplane.WorkKey(key.Namespace, key.Name))
	if st.UID == "" {
		return workState{}, false
	}
	out := workState{
		UID:         st.UID,
		PermanentID: st.Labels[workv1alpha2.ResourceBindingPermanentIDLabel],
		Terminating: st.Terminating,
	}
	if n := len(st.Events); n > 0 {
		out.Since = st.Events[n-1].At
	}
	return out, true
}

// goneAt returns when the Work of key with uid was seen to go away.
func (w works) goneAt(key types.NamespacedName, uid types.UID) (time.Time, bool) {
	for _, ev := range w.Get(localplane.WorkKey(key.Namespace, key.Name)).Events {
		if ev.Type == watch.Deleted && ev.UID == uid {
			return ev.At, true
		}
	}
	return time.Time{}, false
}

// describe says what the tracker holds for key, for failure messages.
func (w works) describe(key types.NamespacedName, ids map[string]string) string {
	st, ok := w.get(key)
	if !ok {
		return "absent"
	}
	id := st.PermanentID
	if name, known := ids[id]; known {
		id = name
	}
	if st.Terminating {
		return "terminating (" + id + ")"
	}
	return fmt.Sprintf("live (%s)", id)
}
