// SPDX-License-Identifier: Apache-2.0

package interpreter_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	configv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/config/v1alpha1"
	"github.com/binding-controller/binding-controller/pkg/interpreter"
	"github.com/binding-controller/binding-controller/pkg/interpreter/luavm"
	"github.com/binding-controller/binding-controller/pkg/interpreter/thirdparty"
	"github.com/binding-controller/binding-controller/pkg/interpreter/webhook"
)

// karmadaCase is one of Karmada's own test cases for a bundled customization.
type karmadaCase struct {
	Name          string         `json:"name"`
	DesiredObj    map[string]any `json:"desiredObj"`
	InputReplicas int64          `json:"inputReplicas"`
	Operation     string         `json:"operation"`
	Output        struct {
		Revised map[string]any `json:"revised"`
	} `json:"output"`
}

func loadCases(t *testing.T, path string) []karmadaCase {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cases []karmadaCase
	for _, doc := range bytes.Split(raw, []byte("\n---\n")) {
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		// Through JSON into unstructured, so numbers are int64 as in objects read from
		// the API server.
		js, err := yaml.YAMLToJSON(doc)
		if err != nil {
			t.Fatal(err)
		}
		var c karmadaCase
		if err := yaml.Unmarshal(js, &c); err != nil {
			t.Fatal(err)
		}
		c.DesiredObj = asUnstructured(t, c.DesiredObj)
		c.Output.Revised = asUnstructured(t, c.Output.Revised)
		cases = append(cases, c)
	}
	return cases
}

func asUnstructured(t *testing.T, m map[string]any) map[string]any {
	t.Helper()
	js, err := yaml.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	js, err = yaml.YAMLToJSON(js)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(js); err != nil {
		t.Fatal(err)
	}
	return u.Object
}

// Every kind Karmada bundles a replicaRevision script for is bundled here, and revises as
// Karmada's own test cases for it say.
func TestBundledKindsReviseAsKarmadasTestCasesSay(t *testing.T) {
	files, err := filepath.Glob("thirdparty/testdata/*/*/*/revisereplica-test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, c := range thirdparty.Customizations() {
		kinds = append(kinds, c.Spec.Target.APIVersion+"/"+c.Spec.Target.Kind)
	}
	wantKinds := []string{
		"apps.kruise.io/v1alpha1/BroadcastJob", "apps.kruise.io/v1alpha1/CloneSet", "apps.kruise.io/v1alpha1/UnitedDeployment",
		"apps.kruise.io/v1beta1/StatefulSet", "argoproj.io/v1alpha1/Workflow", "ray.io/v1/RayService",
	}
	if diff := cmp.Diff(wantKinds, slices.Sorted(slices.Values(kinds))); diff != "" {
		t.Fatalf("bundled kinds (-want +got):\n%s", diff)
	}
	if len(files) != len(wantKinds) {
		t.Fatalf("%d test case files, want one per bundled kind", len(files))
	}
	in := interpreter.New(interpreter.Options{})
	for _, f := range files {
		for _, c := range loadCases(t, f) {
			t.Run(filepath.Base(filepath.Dir(f))+"/"+c.Name, func(t *testing.T) {
				if c.Operation != "ReviseReplica" {
					t.Fatalf("operation %s", c.Operation)
				}
				obj := &unstructured.Unstructured{Object: c.DesiredObj}
				before := obj.DeepCopy()
				got, handled, err := in.ReviseReplica(context.Background(), obj, c.InputReplicas, "member1")
				if err != nil || !handled {
					t.Fatalf("handled %v, err %v", handled, err)
				}
				if diff := cmp.Diff(c.Output.Revised, got.Object); diff != "" {
					t.Errorf("revised (-Karmada's +ours):\n%s", diff)
				}
				if diff := cmp.Diff(before.Object, obj.Object); diff != "" {
					t.Errorf("the input was modified:\n%s", diff)
				}
			})
		}
	}
}

type listerFunc func(schema.GroupVersionKind) ([]configv1alpha1.ResourceInterpreterCustomization, error)

func (f listerFunc) CustomizationsFor(_ context.Context, gvk schema.GroupVersionKind) ([]configv1alpha1.ResourceInterpreterCustomization, error) {
	return f(gvk)
}

func customization(name, apiVersion, kind, lua string) configv1alpha1.ResourceInterpreterCustomization {
	c := configv1alpha1.ResourceInterpreterCustomization{ObjectMeta: metav1.ObjectMeta{Name: name}}
	c.Spec.Target = configv1alpha1.CustomizationTarget{APIVersion: apiVersion, Kind: kind}
	if lua != "" {
		c.Spec.Customizations.ReplicaRevision = &configv1alpha1.ReplicaRevision{LuaScript: lua}
	}
	return c
}

func object(apiVersion, kind string, replicas int64) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": apiVersion, "kind": kind,
		"metadata": map[string]any{"name": "w", "namespace": "default"},
		"spec":     map[string]any{"replicas": replicas, "size": replicas},
	}}
}

const setSize = `function ReviseReplica(obj, n) obj.spec.size = n return obj end`
const setSizeTimesTen = `function ReviseReplica(obj, n) obj.spec.size = n * 10 return obj end`

type webhookFunc func(*unstructured.Unstructured, int64) (*unstructured.Unstructured, bool, error)

func (f webhookFunc) ReviseReplica(_ context.Context, obj *unstructured.Unstructured, n int64) (*unstructured.Unstructured, bool, error) {
	return f(obj, n)
}

func TestLookupOrder(t *testing.T) {
	ctx := context.Background()
	custom := listerFunc(func(gvk schema.GroupVersionKind) ([]configv1alpha1.ResourceInterpreterCustomization, error) {
		if gvk.Kind == "CloneSet" {
			return []configv1alpha1.ResourceInterpreterCustomization{customization("mine", "apps.kruise.io/v1alpha1", "CloneSet", setSizeTimesTen)}, nil
		}
		return nil, nil
	})
	webhook := webhookFunc(func(obj *unstructured.Unstructured, n int64) (*unstructured.Unstructured, bool, error) {
		if obj.GetKind() != "Queue" {
			return nil, false, nil
		}
		out := obj.DeepCopy()
		_ = unstructured.SetNestedField(out.Object, n+100, "spec", "size")
		return out, true, nil
	})
	in := interpreter.New(interpreter.Options{Customizations: custom, Webhooks: webhook})
	for _, c := range []struct {
		obj         *unstructured.Unstructured
		wantHandled bool
		field       string
		want        int64
	}{
		// The user's customization comes before the bundled one.
		{object("apps.kruise.io/v1alpha1", "CloneSet", 6), true, "size", 20},
		// The webhook comes before the bundled customizations and native rules.
		{object("example.io/v1", "Queue", 6), true, "size", 102},
		// The bundled customization.
		{object("apps.kruise.io/v1beta1", "StatefulSet", 6), true, "replicas", 2},
		// Native and unknown kinds are left to render.
		{object("apps/v1", "Deployment", 6), false, "replicas", 6},
		{object("example.io/v1", "Unknown", 6), false, "replicas", 6},
	} {
		got, handled, err := in.ReviseReplica(ctx, c.obj, 2, "member1")
		if err != nil || handled != c.wantHandled {
			t.Fatalf("%s: handled %v, err %v", c.obj.GetKind(), handled, err)
		}
		if v, _, _ := unstructured.NestedInt64(got.Object, "spec", c.field); v != c.want {
			t.Errorf("%s: spec.%s = %d, want %d", c.obj.GetKind(), c.field, v, c.want)
		}
	}
}

// Several customizations of one kind merge as Karmada merges them: in name order, the
// last one with a ReviseReplica script wins.
func TestCustomizationsOfOneKindMergeInNameOrder(t *testing.T) {
	// Karmada keeps the first script in name order; an empty one is filled by a later one.
	empty := customization("a-empty-script", "example.io/v1", "Queue", "")
	empty.Spec.Customizations.ReplicaRevision = &configv1alpha1.ReplicaRevision{}
	list := []configv1alpha1.ResourceInterpreterCustomization{
		customization("d-later", "example.io/v1", "Queue", setSize),
		customization("c-without-revision", "example.io/v1", "Queue", ""),
		customization("b-wins", "example.io/v1", "Queue", setSizeTimesTen),
		empty,
	}
	in := interpreter.New(interpreter.Options{Customizations: listerFunc(func(schema.GroupVersionKind) ([]configv1alpha1.ResourceInterpreterCustomization, error) {
		return list, nil
	})})
	got, handled, err := in.ReviseReplica(context.Background(), object("example.io/v1", "Queue", 9), 4, "member1")
	if err != nil || !handled {
		t.Fatalf("handled %v, err %v", handled, err)
	}
	if v, _, _ := unstructured.NestedInt64(got.Object, "spec", "size"); v != 40 {
		t.Errorf("spec.size = %d, want 40 (b-wins: the first non-empty script in name order)", v)
	}
}

func TestAFailureNamesTheCustomizationTheOperationAndTheCluster(t *testing.T) {
	broken := listerFunc(func(schema.GroupVersionKind) ([]configv1alpha1.ResourceInterpreterCustomization, error) {
		return []configv1alpha1.ResourceInterpreterCustomization{
			customization("queue-replicas", "example.io/v1", "Queue", `function ReviseReplica(obj, n) error("boom") end`),
		}, nil
	})
	in := interpreter.New(interpreter.Options{Customizations: broken})
	_, _, err := in.ReviseReplica(context.Background(), object("example.io/v1", "Queue", 9), 4, "member2")
	var ie *interpreter.Error
	if !errors.As(err, &ie) {
		t.Fatalf("error %v is not an interpreter.Error", err)
	}
	for _, want := range []string{"cluster member2", "ReviseReplica", "Queue default/w", `ResourceInterpreterCustomization "queue-replicas"`, "boom"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	if ie.FailureReason() != "InterpreterFailed" || ie.Transient() {
		t.Errorf("reason %s transient %v, want InterpreterFailed and not transient", ie.FailureReason(), ie.Transient())
	}
}

func TestACustomizationThatCannotBeListedIsATransientFailure(t *testing.T) {
	in := interpreter.New(interpreter.Options{Customizations: listerFunc(func(schema.GroupVersionKind) ([]configv1alpha1.ResourceInterpreterCustomization, error) {
		return nil, errors.New("cache not synced")
	})})
	_, _, err := in.ReviseReplica(context.Background(), object("example.io/v1", "Queue", 9), 4, "member1")
	var ie *interpreter.Error
	if !errors.As(err, &ie) || !ie.Transient() {
		t.Fatalf("error %v, want a transient interpreter.Error", err)
	}
}

// A webhook's failure names the webhook, the operation and the cluster, and is retried:
// the webhook may answer next time with no object changed.
func TestAWebhookFailureNamesTheWebhookAndIsTransient(t *testing.T) {
	failing := webhookFunc(func(*unstructured.Unstructured, int64) (*unstructured.Unstructured, bool, error) {
		return nil, true, &webhook.Error{Configuration: "queue-hooks", Webhook: "size.example.io", Err: errors.New("connection refused")}
	})
	in := interpreter.New(interpreter.Options{Webhooks: failing})
	_, _, err := in.ReviseReplica(context.Background(), object("example.io/v1", "Queue", 9), 5, "member2")
	var ie *interpreter.Error
	if !errors.As(err, &ie) {
		t.Fatalf("error %v is not an interpreter.Error", err)
	}
	want := `cluster member2: ReviseReplica of Queue default/w by webhook "size.example.io" of ResourceInterpreterWebhookConfiguration "queue-hooks" failed: connection refused`
	if err.Error() != want {
		t.Errorf("error\n%s\nwant\n%s", err, want)
	}
	if ie.FailureReason() != "InterpreterFailed" || !ie.Transient() {
		t.Errorf("reason %s transient %v, want InterpreterFailed and transient", ie.FailureReason(), ie.Transient())
	}
}

// A sync renders one Work per cluster from one template: its kind's customizations are
// listed once for the sync, not once per cluster (a cache list copies every match), and
// a list that fails is tried again by the next cluster.
func TestOneSyncListsAKindsCustomizationsOnce(t *testing.T) {
	lists, fail := map[string]int{}, true
	in := interpreter.New(interpreter.Options{Customizations: listerFunc(func(gvk schema.GroupVersionKind) ([]configv1alpha1.ResourceInterpreterCustomization, error) {
		lists[gvk.Kind]++
		if gvk.Kind == "Queue" && fail {
			fail = false
			return nil, errors.New("cache not synced")
		}
		return []configv1alpha1.ResourceInterpreterCustomization{customization("queue-size", "example.io/v1", "Queue", setSize)}, nil
	})})
	sync := in.For(context.Background())
	if _, _, err := sync.ReviseReplica(object("example.io/v1", "Queue", 9), 1, "member1"); err == nil {
		t.Fatal("member1: the failed list should fail the cluster")
	}
	for _, cluster := range []string{"member2", "member3", "member4"} {
		got, handled, err := sync.ReviseReplica(object("example.io/v1", "Queue", 9), 3, cluster)
		if err != nil || !handled {
			t.Fatalf("%s: handled %v, err %v", cluster, handled, err)
		}
		if v, _, _ := unstructured.NestedInt64(got.Object, "spec", "size"); v != 3 {
			t.Errorf("%s: spec.size = %d, want 3", cluster, v)
		}
	}
	for _, cluster := range []string{"member1", "member2"} {
		if _, _, err := sync.ReviseReplica(object("apps/v1", "Deployment", 9), 3, cluster); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff(map[string]int{"Queue": 2, "Deployment": 1}, lists); diff != "" {
		t.Errorf("lists by kind (-want +got):\n%s", diff)
	}
	// The next sync sees changes: it lists again.
	if _, _, err := in.For(context.Background()).ReviseReplica(object("example.io/v1", "Queue", 9), 3, "member1"); err != nil {
		t.Fatal(err)
	}
	if lists["Queue"] != 3 {
		t.Errorf("a new sync listed Queue's customizations %d times in all, want 3", lists["Queue"])
	}
}

// A script past one of the sandbox's bounds fails as a broken script does: parked until
// its customization or the template changes, not retried as a timeout would be.
func TestAScriptPastItsBoundsIsParkedLikeABrokenScript(t *testing.T) {
	for name, body := range map[string]string{
		"endless loop":     `while true do end`,
		"doubling":         `local s = "x" while true do s = s .. s end`,
		"backtracking":     `string.find(string.rep("a", 400), ".-.-.-b")`,
		"tables of tables": `local t = {} while true do t[#t + 1] = {} end`,
	} {
		hostile := listerFunc(func(schema.GroupVersionKind) ([]configv1alpha1.ResourceInterpreterCustomization, error) {
			return []configv1alpha1.ResourceInterpreterCustomization{
				customization("hostile", "example.io/v1", "Queue", "function ReviseReplica(obj, n) "+body+" end"),
			}, nil
		})
		// A minute instead of Karmada's second: on a busy machine the time limit, which is
		// transient by design, could come before the bound this test is about.
		in := interpreter.New(interpreter.Options{Customizations: hostile, Pool: luavm.NewPool(1, time.Minute)})
		_, _, err := in.ReviseReplica(context.Background(), object("example.io/v1", "Queue", 9), 4, "member1")
		var ie *interpreter.Error
		if !errors.As(err, &ie) {
			t.Fatalf("%s: error %v is not an interpreter.Error", name, err)
		}
		if !strings.Contains(err.Error(), `ResourceInterpreterCustomization "hostile"`) || !strings.Contains(err.Error(), "went past its bounds") {
			t.Errorf("%s: error %q should name the customization and the bound", name, err)
		}
		if ie.FailureReason() != "InterpreterFailed" || ie.Transient() {
			t.Errorf("%s: reason %s transient %v, want InterpreterFailed and not transient", name, ie.FailureReason(), ie.Transient())
		}
	}
}
