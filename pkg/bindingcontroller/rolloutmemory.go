// SPDX-License-Identifier: Apache-2.0

package bindingcontroller

import (
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/types"
)

// rolloutMemory is what this process remembers of the rollouts it writes, so that a
// sync mid-rollout (a health poll, every few seconds for each binding) need not ask the
// API server for what it already knows. It is only a cache: the rollout's state stays in
// the API server, and a process that starts with none (a restart, a failover) reads
// everything live, as it would without it.
type rolloutMemory struct {
	mu        sync.Mutex
	byBinding map[string]*rememberedRollout
}

// rememberedRollout is one binding's, by its index key; uid tells a binding recreated
// under the same name, which remembers nothing.
type rememberedRollout struct {
	uid types.UID
	// written is the resourceVersion this process's last write of the rollout object
	// returned; "" when unknown (none yet, or the last write failed).
	written string
	// revisions are the template revisions the clusters held back render from, by
	// name. A revision's content never changes under its name (the name is its hash),
	// and its template generation only when it becomes current again, which only a sync
	// that lists the revisions does (templaterevision.Store.Ensure).
	revisions map[string]*appsv1.ControllerRevision
}

func newRolloutMemory() *rolloutMemory {
	return &rolloutMemory{byBinding: map[string]*rememberedRollout{}}
}

// of is binding's entry, made afresh when it is another binding's; call with mu held.
func (m *rolloutMemory) of(binding string, uid types.UID) *rememberedRollout {
	e := m.byBinding[binding]
	if e == nil || e.uid != uid {
		e = &rememberedRollout{uid: uid}
		m.byBinding[binding] = e
	}
	return e
}

// wrote records the resourceVersion a write of binding's rollout object returned; ""
// after a write that failed, whose outcome is not known.
func (m *rolloutMemory) wrote(binding string, uid types.UID, resourceVersion string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.of(binding, uid).written = resourceVersion
}

// isLastWrite tells whether resourceVersion is the one this process's last write of
// binding's rollout object returned.
func (m *rolloutMemory) isLastWrite(binding string, uid types.UID, resourceVersion string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.byBinding[binding]
	return e != nil && e.uid == uid && e.written != "" && e.written == resourceVersion
}

// revisionsNamed returns binding's remembered revisions of names; false when one of them
// is not remembered.
func (m *rolloutMemory) revisionsNamed(binding string, uid types.UID, names []string) (map[string]*appsv1.ControllerRevision, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.byBinding[binding]
	if e == nil || e.uid != uid {
		return nil, len(names) == 0
	}
	out := make(map[string]*appsv1.ControllerRevision, len(names))
	for _, name := range names {
		rev, ok := e.revisions[name]
		if !ok {
			return nil, false
		}
		out[name] = rev
	}
	return out, true
}

// keepRevisions makes revisions the ones remembered for binding: those a sync rendered
// from. The others go, so a binding whose rollout is over keeps none.
func (m *rolloutMemory) keepRevisions(binding string, uid types.UID, revisions map[string]*appsv1.ControllerRevision) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.of(binding, uid).revisions = revisions
}

// forget drops binding's entry: its rollout, or the binding itself, is gone.
func (m *rolloutMemory) forget(binding string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.byBinding, binding)
}
