// SPDX-License-Identifier: Apache-2.0

// Package demoscript plays the case the binding controller exists for, against a local
// control plane and the built controller-manager binary, and narrates it as a timeline
// ('make demo'); RunRollout plays a staged rollout the same way ('make demo-rollout',
// rollout.go). test/demo runs both as tests.
//
// The case: Deployment default/nginx and its ResourceBinding target member1..member3.
// member1 is disconnected and the binding deleted, so member1's Work stays "being
// deleted". The Deployment and binding are recreated: member2 and member3 get their new
// Works at once, member1 fails and says why (events, log). member1 reconnects, its old
// Work is released, and its new Work follows by itself.
package demoscript

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/binding-controller/binding-controller/internal/testenv/envtestutil"
	"github.com/binding-controller/binding-controller/internal/testenv/executionsim"
	"github.com/binding-controller/binding-controller/internal/testenv/localplane"
	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
	"github.com/binding-controller/binding-controller/pkg/names"
)

// Options configure a run.
type Options struct {
	// Manager is the path of the binding-controller-manager binary.
	Manager string
	// ManagerArgs are extra flags for the manager (after the demo's own, so they win).
	ManagerArgs []string
	// LogPath is where the manager's output goes; empty: a new file in the temp directory,
	// kept after the run.
	LogPath string
	// StepTimeout bounds each step; zero means 30s.
	StepTimeout time.Duration
	// Pause is how long to wait between the acts of the story, so a person can follow
	// it; zero runs straight through. It does not count into the measured reactions.
	Pause time.Duration
}

// The objects of the case.
const (
	namespace    = "default"
	templateName = "nginx"
	bindingName  = "nginx-deployment"
	disconnected = "member1"
)

// ErrStepFailed is returned (wrapped) when a step did not behave.
var ErrStepFailed = errors.New("demo step failed")

type demo struct {
	out     io.Writer
	opts    Options
	ctx     context.Context
	c       client.Client
	config  *rest.Config
	works   works
	sim     *executionsim.Simulator
	mgr     *localplane.Process
	logPath string
	members []string
	t0      time.Time
	ids     map[string]string // permanent-id → "first binding" / "second binding"
}

// Run starts a local control plane, the manager and the execution-side simulator, plays
// the case, and stops everything again, also when ctx ends (Ctrl-C). It returns nil when
// every step behaved, an error wrapping ErrStepFailed when one did not, or ctx's error.
func Run(ctx context.Context, out io.Writer, opts Options) error {
	return run(ctx, out, opts, story{
		title:     "The binding controller's case: one disconnected member cluster must not block the others.",
		simulated: "connected members release the Works deleted for them",
		play:      (*demo).play,
		summary:   (*demo).summary,
	})
}

// story is one case a demo plays on the plane run sets up.
type story struct {
	title string
	// managerArgs go before Options.ManagerArgs, so that a user's flags win.
	managerArgs []string
	// simulated says what the execution side does; simulate, when set, tells the
	// simulator so before the manager starts.
	simulated string
	simulate  func(*executionsim.Simulator)
	play      func(*demo) error
	summary   func(*demo)
}

func run(ctx context.Context, out io.Writer, opts Options, st story) (err error) {
	if opts.StepTimeout == 0 {
		opts.StepTimeout = 30 * time.Second
	}
	if _, err := os.Stat(opts.Manager); err != nil {
		return fmt.Errorf("controller-manager binary: %w (run 'make build' first)", err)
	}
	d := &demo{out: out, opts: opts, members: localplane.DefaultMembers, ids: map[string]string{}}
	fmt.Fprintf(out, "%s\n\n", st.title)

	// Control plane.
	begin := time.Now()
	dir, err := os.MkdirTemp("", "binding-controller-demo-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	plane, err := localplane.Start(ctx, localplane.Options{Members: d.members, KubeconfigPath: kubeconfig})
	if err != nil {
		return fmt.Errorf("starting the control plane: %w", err)
	}
	// Everything the story starts ends with runCtx, before the plane stops under it.
	runCtx, cancel := context.WithCancel(ctx)
	d.ctx = runCtx
	defer func() {
		cancel()
		if d.mgr != nil {
			if stopErr := d.mgr.Stop(40 * time.Second); stopErr != nil {
				err = errors.Join(err, fmt.Errorf("stopping binding-controller-manager: %w", stopErr))
			}
		}
		if stopErr := plane.Stop(); stopErr != nil {
			err = errors.Join(err, fmt.Errorf("stopping the control plane: %w", stopErr))
		}
		fmt.Fprintf(out, "  · stopped binding-controller-manager and the control plane\n")
	}()
	d.c, d.config = plane.Client, plane.Config
	fmt.Fprintf(out, "  · control plane up in %s: kube-apiserver %s + etcd (%s), Clusters %s\n",
		secs(time.Since(begin)), plane.APIServerURL(), envtestutil.BinaryAssetsDir(), strings.Join(d.members, ", "))
	if err := ctx.Err(); err != nil {
		return err
	}

	// Work tracker, execution side, manager.
	md, err := metadata.NewForConfig(plane.Config)
	if err != nil {
		return err
	}
	tracker, err := localplane.StartWorkTracker(runCtx, md)
	if err != nil {
		return err
	}
	d.works = works{tracker}
	d.sim = executionsim.New(plane.Client, 50*time.Millisecond)
	if st.simulate != nil {
		st.simulate(d.sim)
	}
	go d.sim.Run(runCtx)
	if err := d.startManager(kubeconfig, st.managerArgs); err != nil {
		return err
	}
	fmt.Fprintf(out, "  · execution side simulated: %s\n\n", st.simulated)

	if err := st.play(d); err != nil {
		return err
	}
	st.summary(d)
	return nil
}

func (d *demo) startManager(kubeconfig string, storyArgs []string) error {
	begin := time.Now()
	port, err := localplane.FreePort()
	if err != nil {
		return err
	}
	d.logPath = d.opts.LogPath
	var logFile *os.File
	if d.logPath == "" {
		logFile, err = os.CreateTemp("", "binding-controller-demo-*.log")
		if err == nil {
			d.logPath = logFile.Name()
		}
	} else {
		logFile, err = os.Create(d.logPath)
	}
	if err != nil {
		return fmt.Errorf("creating the manager log: %w", err)
	}
	defer logFile.Close()
	args := append([]string{"--kubeconfig", kubeconfig, "--leader-elect=false",
		"--metrics-bind-address=0", "--health-probe-bind-address=127.0.0.1:" + strconv.Itoa(port)}, storyArgs...)
	args = append(args, d.opts.ManagerArgs...)
	d.mgr, err = localplane.StartProcess(d.opts.Manager, args, logFile, logFile)
	if err != nil {
		return err
	}
	url := fmt.Sprintf("http://127.0.0.1:%d/readyz", port)
	if err := localplane.WaitReady(d.ctx, url, d.mgr, d.opts.StepTimeout); err != nil {
		if d.ctx.Err() != nil {
			return d.ctx.Err()
		}
		fmt.Fprintf(d.out, "  ✗ binding-controller-manager did not get ready: %v\n%s", err, d.logTail())
		return fmt.Errorf("%w: binding-controller-manager did not get ready: %v", ErrStepFailed, err)
	}
	fmt.Fprintf(d.out, "  · binding-controller-manager ready in %s (pid %d); its log: %s\n",
		secs(time.Since(begin)), d.mgr.Cmd.Process.Pid, d.logPath)
	return nil
}

func (d *demo) play() error {
	ctx := d.ctx
	workName := names.WorkName("Deployment", namespace, templateName)
	others := d.members[1:]
	first, second := string(uuid.NewUUID()), string(uuid.NewUUID())
	d.ids[first], d.ids[second] = "first binding", "second binding"

	// 1. The Deployment and its binding: a Work in every member.
	d.t0 = time.Now()
	if err := d.createTemplateAndBinding(first); err != nil {
		return err
	}
	d.say("Created Deployment %s/%s and its ResourceBinding %s/%s → %s", namespace, templateName, namespace, bindingName,
		strings.Join(d.members, ", "))
	if err := d.await("a Work in every member", func() (bool, string) {
		return d.allLive(d.members, first)
	}); err != nil {
		return err
	}
	d.ok("Work %s in %s / %s", workName, names.ExecutionNamespace(d.members[0]), strings.Join(d.members[1:], " / "))
	if err := d.pause(); err != nil {
		return err
	}

	// 2. member1 disconnected; the binding deleted.
	d.sim.Disconnect(disconnected)
	d.say("%s disconnected (its execution side stops releasing Works)", disconnected)
	oldWork, _ := d.works.get(d.workKey(disconnected))
	rb := &workv1alpha2.ResourceBinding{}
	if err := d.c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: bindingName}, rb); err != nil {
		return err
	}
	if err := d.c.Delete(ctx, rb); err != nil {
		return err
	}
	deletedAt := time.Now()
	d.say("Deleted ResourceBinding %s/%s", namespace, bindingName)
	if err := d.await(fmt.Sprintf("the Works of %s gone and the binding released", strings.Join(others, " and ")), func() (bool, string) {
		var seen []string
		done := true
		for _, m := range others {
			if _, ok := d.works.get(d.workKey(m)); ok {
				done = false
			}
			seen = append(seen, m+": "+d.works.describe(d.workKey(m), d.ids))
		}
		err := d.c.Get(ctx, client.ObjectKeyFromObject(rb), &workv1alpha2.ResourceBinding{})
		if !apierrors.IsNotFound(err) {
			done = false
			seen = append(seen, "binding: still there")
		}
		return done, strings.Join(seen, ", ")
	}); err != nil {
		return err
	}
	d.ok("Works in %s deleted and the binding released %s after the delete (%s's stuck Work does not hold it)",
		strings.Join(others, " and "), secs(time.Since(deletedAt)), disconnected)
	if st, ok := d.works.get(d.workKey(disconnected)); !ok || !st.Terminating || st.UID != oldWork.UID {
		return d.fail(disconnected+"'s old Work stays terminating", "%s's Work: %s", disconnected,
			d.works.describe(d.workKey(disconnected), d.ids))
	}
	d.ok("%s's Work stays terminating: nobody releases its finalizer %s", disconnected, workv1alpha1.ExecutionControllerFinalizer)
	if err := d.c.Delete(ctx, nginxDeployment()); err != nil {
		return err
	}
	if err := d.await("the Deployment gone", func() (bool, string) {
		err := d.c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: templateName}, &appsv1.Deployment{})
		return apierrors.IsNotFound(err), fmt.Sprintf("get: %v", err)
	}); err != nil {
		return err
	}
	d.say("Deleted Deployment %s/%s", namespace, templateName)
	if err := d.pause(); err != nil {
		return err
	}

	// 3. Recreated while member1's old Work is still terminating.
	if err := d.createTemplateAndBinding(second); err != nil {
		return err
	}
	recreatedAt := time.Now()
	d.say("Recreated Deployment %s/%s and its binding (new permanent-id) → %s", namespace, templateName, strings.Join(d.members, ", "))
	if err := d.await(fmt.Sprintf("new Works in %s", strings.Join(others, " and ")), func() (bool, string) {
		return d.allLive(others, second)
	}); err != nil {
		return err
	}
	var latest time.Time
	for _, m := range others {
		if st, _ := d.works.get(d.workKey(m)); st.Since.After(latest) {
			latest = st.Since
		}
	}
	d.ok("%s got their new Works %s after the recreate", strings.Join(others, " and "), secs(latest.Sub(recreatedAt)))
	if st, ok := d.works.get(d.workKey(disconnected)); !ok || !st.Terminating || st.UID != oldWork.UID {
		return d.fail(disconnected+" still has only its old, terminating Work", "%s's Work: %s", disconnected,
			d.works.describe(d.workKey(disconnected), d.ids))
	}

	failure := fmt.Sprintf("work %s/%s is being deleted", names.ExecutionNamespace(disconnected), workName)
	binding, template := &workv1alpha2.ResourceBinding{}, &appsv1.Deployment{}
	if err := d.c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: bindingName}, binding); err != nil {
		return err
	}
	if err := d.c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: templateName}, template); err != nil {
		return err
	}
	if err := d.await(fmt.Sprintf("a Warning SyncWorkFailed %q event on the binding and on the Deployment", failure), func() (bool, string) {
		onBinding, onTemplate, seen := d.failureEvents(binding.UID, template.UID, failure)
		return onBinding && onTemplate, seen
	}); err != nil {
		return err
	}
	d.ok("%s reported: Warning SyncWorkFailed %q on the binding and on the Deployment", disconnected, failure)
	wantLog := fmt.Sprintf("Failed to transform resourceBinding(%s/%s) to works. Error: %s.", namespace, bindingName, failure)
	var logMsg string
	if err := d.await("the failure in the manager's log", func() (bool, string) {
		logMsg = d.findLog(wantLog)
		return logMsg != "", "no such line in " + d.logPath
	}); err != nil {
		return err
	}
	d.ok("log: %s", logMsg)
	if err := d.pause(); err != nil {
		return err
	}

	// 4. member1 reconnects: its old Work is released, and its new Work follows.
	d.sim.Connect(disconnected)
	reconnectedAt := time.Now()
	d.say("%s reconnected (its execution side releases its old Work)", disconnected)
	var releasedAt time.Time
	if err := d.await(disconnected+"'s old Work released", func() (bool, string) {
		at, ok := d.works.goneAt(d.workKey(disconnected), oldWork.UID)
		releasedAt = at
		return ok, d.works.describe(d.workKey(disconnected), d.ids)
	}); err != nil {
		return err
	}
	d.ok("%s's old Work released %s after the reconnect", disconnected, secs(releasedAt.Sub(reconnectedAt)))
	if err := d.await(disconnected+"'s new Work", func() (bool, string) {
		return d.allLive([]string{disconnected}, second)
	}); err != nil {
		return err
	}
	st, _ := d.works.get(d.workKey(disconnected))
	d.ok("%s got its new Work %s after its old Work was released", disconnected, secs(st.Since.Sub(releasedAt)))
	return nil
}

// pause waits Options.Pause, or until ctx ends.
func (d *demo) pause() error {
	if d.opts.Pause <= 0 {
		return nil
	}
	select {
	case <-d.ctx.Done():
		return d.ctx.Err()
	case <-time.After(d.opts.Pause):
		return nil
	}
}

func (d *demo) summary() {
	fmt.Fprintf(d.out, "\nAll steps behaved (%s):\n", secs(time.Since(d.t0)))
	fmt.Fprintf(d.out, "  • %s's stuck Work did not hold up %s: they got their new Works right after the recreate.\n",
		disconnected, strings.Join(d.members[1:], " and "))
	fmt.Fprintf(d.out, "  • %s's failure was reported where a user looks: events on the binding and the Deployment, and the log.\n", disconnected)
	fmt.Fprintf(d.out, "  • %s recovered by itself once its old Work was released: no restart, no nudge.\n", disconnected)
	fmt.Fprintf(d.out, "  The manager's full log: %s\n", d.logPath)
}

func (d *demo) workKey(cluster string) types.NamespacedName {
	return types.NamespacedName{Namespace: names.ExecutionNamespace(cluster), Name: names.WorkName("Deployment", namespace, templateName)}
}

// allLive tells whether every cluster has a live Work of the binding with permanentID.
func (d *demo) allLive(clusters []string, permanentID string) (bool, string) {
	done := true
	var seen []string
	for _, m := range clusters {
		st, ok := d.works.get(d.workKey(m))
		if !ok || st.Terminating || st.PermanentID != permanentID {
			done = false
		}
		seen = append(seen, m+": "+d.works.describe(d.workKey(m), d.ids))
	}
	return done, strings.Join(seen, ", ")
}

// failureEvents looks for the Warning SyncWorkFailed event with message on the binding
// and on the template (by UID, so an earlier incarnation's events do not count).
func (d *demo) failureEvents(bindingUID, templateUID types.UID, message string) (onBinding, onTemplate bool, seen string) {
	list := &corev1.EventList{}
	if err := d.c.List(d.ctx, list, client.InNamespace(namespace)); err != nil {
		return false, false, "listing events: " + err.Error()
	}
	var all []string
	for _, e := range list.Items {
		if e.InvolvedObject.UID != bindingUID && e.InvolvedObject.UID != templateUID {
			continue
		}
		all = append(all, fmt.Sprintf("%s %s %s on %s", e.Type, e.Reason, strconv.Quote(e.Message), e.InvolvedObject.Kind))
		if e.Type != corev1.EventTypeWarning || e.Reason != "SyncWorkFailed" || e.Message != message {
			continue
		}
		onBinding = onBinding || e.InvolvedObject.UID == bindingUID
		onTemplate = onTemplate || e.InvolvedObject.UID == templateUID
	}
	if len(all) == 0 {
		return onBinding, onTemplate, "no events on the new binding or Deployment"
	}
	return onBinding, onTemplate, strings.Join(all, "; ")
}

// findLog returns the message of the first manager log line containing want, or "".
func (d *demo) findLog(want string) string {
	f, err := os.Open(d.logPath)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if !strings.Contains(line, want) {
			continue
		}
		var entry struct {
			Level string `json:"level"`
			Msg   string `json:"msg"`
		}
		if json.Unmarshal([]byte(line), &entry) == nil && entry.Msg != "" {
			return fmt.Sprintf("%s (level %s)", entry.Msg, entry.Level)
		}
		return line
	}
	return ""
}

func (d *demo) logTail() string {
	tail := localplane.LogTail(d.logPath, 10)
	if tail == "" {
		return ""
	}
	return "    last lines of " + d.logPath + ":\n      " + strings.ReplaceAll(tail, "\n", "\n      ") + "\n"
}

// await polls cond until it holds. On timeout it prints ✗ with what was seen, and fails.
func (d *demo) await(what string, cond func() (bool, string)) error {
	deadline := time.Now().Add(d.opts.StepTimeout)
	for {
		ok, seen := cond()
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return d.fail(what, "not within %s; saw %s", d.opts.StepTimeout, seen)
		}
		select {
		case <-d.ctx.Done():
			return d.ctx.Err()
		case <-d.mgr.Done():
			_, seen = cond()
			return d.fail(what, "binding-controller-manager exited (%v); saw %s\n%s", d.mgr.Err(), seen, d.logTail())
		case <-time.After(25 * time.Millisecond):
		}
	}
}

func (d *demo) fail(what, format string, args ...any) error {
	detail := fmt.Sprintf(format, args...)
	d.stamp("✗ %s: %s", what, detail)
	return fmt.Errorf("%w: %s: %s", ErrStepFailed, what, detail)
}

func (d *demo) say(format string, args ...any) { d.stamp(format, args...) }

func (d *demo) ok(format string, args ...any) { d.stamp("✓ "+format, args...) }

func (d *demo) stamp(format string, args ...any) {
	fmt.Fprintf(d.out, "[%5.1fs] %s\n", time.Since(d.t0).Seconds(), fmt.Sprintf(format, args...))
}

func secs(dur time.Duration) string {
	if dur < 0 {
		dur = 0
	}
	if dur < 100*time.Millisecond {
		return fmt.Sprintf("%dms", dur.Milliseconds())
	}
	return fmt.Sprintf("%.1fs", dur.Seconds())
}

func (d *demo) createTemplateAndBinding(permanentID string) error {
	if err := d.c.Create(d.ctx, nginxDeployment()); err != nil {
		return fmt.Errorf("creating the Deployment: %w", err)
	}
	if err := d.c.Create(d.ctx, nginxBinding(permanentID, d.members)); err != nil {
		return fmt.Errorf("creating the binding: %w", err)
	}
	return nil
}

func nginxDeployment() *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: templateName, Namespace: namespace, Labels: map[string]string{"app": "nginx"}},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](3),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "nginx"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "nginx"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx:1.27"}}},
			},
		},
	}
}

func nginxBinding(permanentID string, members []string) *workv1alpha2.ResourceBinding {
	clusters := make([]workv1alpha2.TargetCluster, 0, len(members))
	for _, m := range members {
		clusters = append(clusters, workv1alpha2.TargetCluster{Name: m, Replicas: 1})
	}
	return &workv1alpha2.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Name: bindingName, Namespace: namespace,
			Labels: map[string]string{workv1alpha2.ResourceBindingPermanentIDLabel: permanentID}},
		Spec: workv1alpha2.ResourceBindingSpec{
			Resource: workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: namespace, Name: templateName},
			Replicas: int32(len(members)),
			Clusters: clusters,
		},
	}
}
