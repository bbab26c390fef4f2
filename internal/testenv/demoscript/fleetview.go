// SPDX-License-Identifier: Apache-2.0

package demoscript

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/binding-controller/binding-controller/internal/testenv/envtestutil"
	rolloutsv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/rollouts/v1alpha1"
	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
	"github.com/binding-controller/binding-controller/pkg/names"
)

// fleetView follows what an operator watching a rollout looks at: the binding's
// BindingRollout, the Work each member holds, the binding's revisions and its rollout
// events, through informers, so that watching costs the API server a few watches and
// no polling, and sees every write in order. The demo refreshes it as it waits; each
// change is printed once.
type fleetView struct {
	d        *demo
	cache    cache.Cache
	workName string
	// soaks are the stages' minSuccessTime, for the headline.
	soaks map[string]time.Duration

	mu sync.Mutex
	// carried is, per cluster, every manifest its Work carried, in the order the one Work
	// informer delivered them: a write that was undone a moment later is in it too.
	carried map[string][]carriedManifest
	seq     int

	bindingUID types.UID
	headline   string
	table      string
	events     []recordedEvent
}

// recordedEvent is a rollout event as the informer delivered it, keyed by UID and count.
type recordedEvent struct {
	key     string
	event   corev1.Event
	printed bool
}

// carriedManifest is one spec of a member's Work.
type carriedManifest struct {
	// seq orders the manifests of all clusters as the watch delivered them.
	seq        int
	at         time.Time
	generation int64
	image      string
	manifest   map[string]any
	// health is the first health the member reported for this spec ("" until then),
	// reportedSeq and reportedAt when.
	health      workv1alpha1.ResourceHealth
	reportedSeq int
	reportedAt  time.Time
}

// fleetState is one consistent reading of the view.
type fleetState struct {
	rollout *rolloutsv1alpha1.BindingRollout // nil until the controller created it
	images  map[string]string                // cluster → the image its Work carries now
}

func startFleetView(d *demo, soaks map[string]time.Duration) (*fleetView, error) {
	c, err := cache.New(d.config, cache.Options{Scheme: envtestutil.Scheme()})
	if err != nil {
		return nil, err
	}
	v := &fleetView{d: d, cache: c, soaks: soaks, workName: names.WorkName("Deployment", namespace, templateName),
		carried: map[string][]carriedManifest{}}
	works, err := c.GetInformer(d.ctx, &workv1alpha1.Work{})
	if err != nil {
		return nil, err
	}
	if _, err := works.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    v.onWork,
		UpdateFunc: func(_, obj any) { v.onWork(obj) },
	}); err != nil {
		return nil, err
	}
	events, err := c.GetInformer(d.ctx, &corev1.Event{})
	if err != nil {
		return nil, err
	}
	if _, err := events.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    v.onEvent,
		UpdateFunc: func(_, obj any) { v.onEvent(obj) },
	}); err != nil {
		return nil, err
	}
	for _, obj := range []client.Object{&rolloutsv1alpha1.BindingRollout{}, &appsv1.ControllerRevision{}} {
		if _, err := c.GetInformer(d.ctx, obj); err != nil {
			return nil, err
		}
	}
	go func() { _ = c.Start(d.ctx) }()
	if !c.WaitForCacheSync(d.ctx) {
		return nil, fmt.Errorf("the demo's informers did not sync: %w", d.ctx.Err())
	}
	return v, nil
}

// onWork records a new spec of a member's Work of the template.
func (v *fleetView) onWork(obj any) {
	w, ok := obj.(*workv1alpha1.Work)
	if !ok || w.Name != v.workName || len(w.Spec.Workload.Manifests) == 0 {
		return
	}
	cluster, ok := names.ClusterOfExecutionNamespace(w.Namespace)
	if !ok {
		return
	}
	manifest := map[string]any{}
	if err := json.Unmarshal(w.Spec.Workload.Manifests[0].Raw, &manifest); err != nil {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	history := v.carried[cluster]
	if n := len(history); n == 0 || history[n-1].generation != w.Generation {
		v.seq++
		history = append(history, carriedManifest{seq: v.seq, at: time.Now(), generation: w.Generation,
			image: imageOf(manifest), manifest: manifest})
		v.carried[cluster] = history
	}
	last := &history[len(history)-1]
	if health := reportedHealth(w); last.health == "" && health != "" {
		v.seq++
		last.health, last.reportedSeq, last.reportedAt = health, v.seq, time.Now()
	}
}

// reportedHealth is the health the member reported for the spec the Work carries now: the
// execution side reflects the Work's generation it applied (executionsim), and a health
// reported for an earlier spec is not this one's.
func reportedHealth(w *workv1alpha1.Work) workv1alpha1.ResourceHealth {
	if len(w.Status.ManifestStatuses) == 0 || w.Status.ManifestStatuses[0].Status == nil {
		return ""
	}
	var reflected struct {
		Generation int64 `json:"generation"`
	}
	if json.Unmarshal(w.Status.ManifestStatuses[0].Status.Raw, &reflected) != nil || reflected.Generation != w.Generation {
		return ""
	}
	return w.Status.ManifestStatuses[0].Health
}

// mark is the sequence number of the last manifest seen: what came after it is since.
func (v *fleetView) mark() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.seq
}

// since is what cluster's Work carried after mark.
func (v *fleetView) since(cluster string, mark int) []carriedManifest {
	v.mu.Lock()
	defer v.mu.Unlock()
	var out []carriedManifest
	for _, m := range v.carried[cluster] {
		if m.seq > mark {
			out = append(out, m)
		}
	}
	return out
}

// current is the manifest cluster's Work carries now.
func (v *fleetView) current(cluster string) (carriedManifest, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	history := v.carried[cluster]
	if len(history) == 0 {
		return carriedManifest{}, false
	}
	return history[len(history)-1], true
}

func (v *fleetView) watchBinding(uid types.UID) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.bindingUID = uid
}

// refresh reads the view, prints what changed since the last refresh, and returns what it read.
func (v *fleetView) refresh() fleetState {
	st := fleetState{images: map[string]string{}}
	for _, m := range v.d.members {
		if cur, ok := v.current(m); ok {
			st.images[m] = cur.image
		}
	}
	rollout := &rolloutsv1alpha1.BindingRollout{}
	if err := v.cache.Get(v.d.ctx, client.ObjectKey{Namespace: namespace, Name: bindingName}, rollout); err == nil {
		st.rollout = rollout
		v.printRollout(rollout.Status, st.images)
	}
	v.printEvents()
	return st
}

// printRollout prints the rollout's headline and table when they changed. A table is
// printed only once every row's image is its revision's: the controller writes the
// Works before the status, and a table caught in between would show a cluster on one
// revision with the other's image.
func (v *fleetView) printRollout(status rolloutsv1alpha1.BindingRolloutStatus, images map[string]string) {
	if status.Phase == "" {
		// Created, its status not written yet.
		return
	}
	revisionImages := v.revisionImages()
	for _, c := range status.Clusters {
		if want, ok := revisionImages[c.Revision]; !ok || images[c.Name] != want {
			return
		}
	}
	headline := fmt.Sprintf("BindingRollout %s/%s: %s", namespace, bindingName, status.Phase)
	if status.Stage != "" && status.Phase != rolloutsv1alpha1.PhaseComplete {
		headline += " · stage " + status.Stage
	}
	headline += fmt.Sprintf(" · updated %d, healthy %d of %d", status.UpdatedClusters, status.HealthyClusters, status.TotalClusters)
	if status.SoakStarted != nil && status.Phase == rolloutsv1alpha1.PhaseProgressing {
		headline += fmt.Sprintf(" · every cluster of %s healthy, soaking %s", status.Stage, v.soaks[status.Stage])
	}
	table := revisionTable(status, images)
	v.mu.Lock()
	changed := headline != v.headline || table != v.table
	v.headline, v.table = headline, table
	v.mu.Unlock()
	if changed {
		v.d.stamp("%s", headline)
		fmt.Fprint(v.d.out, table)
	}
}

// revisionTable is the per-cluster table, indented under the stamped lines.
func revisionTable(status rolloutsv1alpha1.BindingRolloutStatus, images map[string]string) string {
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	why := slices.ContainsFunc(status.Clusters, func(c rolloutsv1alpha1.ClusterRolloutStatus) bool { return c.Message != "" })
	header := "CLUSTER\tSTAGE\tREVISION\tSTATE\tIMAGE"
	if why {
		header += "\tWHY"
	}
	fmt.Fprintln(tw, header)
	for _, c := range status.Clusters {
		row := fmt.Sprintf("%s\t%s\t%s\t%s\t%s", c.Name, c.Stage, c.Revision, c.State, images[c.Name])
		if why {
			row += "\t" + c.Message
		}
		fmt.Fprintln(tw, row)
	}
	_ = tw.Flush()
	var out strings.Builder
	for line := range strings.Lines(buf.String()) {
		out.WriteString("          " + strings.TrimRight(line, " \n") + "\n")
	}
	return out.String()
}

// revisionImages maps each of the binding's revisions to the image it holds, as the
// ControllerRevision stores it.
func (v *fleetView) revisionImages() map[string]string {
	list := &appsv1.ControllerRevisionList{}
	out := map[string]string{}
	if err := v.cache.List(v.d.ctx, list, client.InNamespace(namespace)); err != nil {
		return out
	}
	for _, rev := range list.Items {
		content := map[string]any{}
		if json.Unmarshal(rev.Data.Raw, &content) == nil {
			out[rev.Name] = imageOf(content)
		}
	}
	return out
}

// onEvent records a rollout event in the order the informer delivers them, which is the
// order the manager recorded them in: their timestamps have seconds only. An event the
// recorder counted again is recorded again.
func (v *fleetView) onEvent(obj any) {
	e, ok := obj.(*corev1.Event)
	if !ok || !strings.HasPrefix(e.Reason, "Rollout") {
		return
	}
	key := fmt.Sprintf("%s/%d", e.UID, e.Count)
	v.mu.Lock()
	defer v.mu.Unlock()
	if !slices.ContainsFunc(v.events, func(r recordedEvent) bool { return r.key == key }) {
		v.events = append(v.events, recordedEvent{key: key, event: *e.DeepCopy()})
	}
}

// printEvents prints the binding's rollout events not printed yet.
func (v *fleetView) printEvents() {
	v.mu.Lock()
	var fresh []corev1.Event
	for i := range v.events {
		r := &v.events[i]
		if !r.printed && v.bindingUID != "" && r.event.InvolvedObject.UID == v.bindingUID {
			r.printed = true
			fresh = append(fresh, r.event)
		}
	}
	v.mu.Unlock()
	for _, e := range fresh {
		v.d.stamp("event %s %s: %s", e.Type, e.Reason, e.Message)
	}
}

// rolloutEvents are the binding's rollout events, in the order they were recorded.
func (v *fleetView) rolloutEvents() []corev1.Event {
	v.mu.Lock()
	defer v.mu.Unlock()
	var out []corev1.Event
	for _, r := range v.events {
		if v.bindingUID != "" && r.event.InvolvedObject.UID == v.bindingUID {
			out = append(out, r.event)
		}
	}
	return out
}

// imageOf is the first container's image of a Deployment manifest, or of a revision's content.
func imageOf(obj map[string]any) string {
	containers, _, _ := unstructured.NestedSlice(obj, "spec", "template", "spec", "containers")
	if len(containers) == 0 {
		return ""
	}
	first, _ := containers[0].(map[string]any)
	image, _ := first["image"].(string)
	return image
}
