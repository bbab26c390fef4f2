// SPDX-License-Identifier: Apache-2.0

package luavm

import (
	"encoding/json"
	"fmt"
	"math"

	lua "github.com/yuin/gopher-lua"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// kubeModuleName is what scripts require: local kube = require("kube").
const kubeModuleName = "kube"

// newKubeModule returns the kube module's table: the helpers Karmada's scripts use.
func newKubeModule(l *lua.LState) *lua.LTable {
	return l.SetFuncs(l.NewTable(), map[string]lua.LGFunction{
		"resourceAdd":             resourceAdd,
		"getResourceQuantity":     getResourceQuantity,
		"accuratePodRequirements": accuratePodRequirements,
		"getPodDependencies":      getPodDependencies,
	})
}

// resourceAdd(q1, q2, ...) sums resource quantities ("100m", "1Gi"; nil counts as zero)
// and returns the sum as a quantity string.
func resourceAdd(l *lua.LState) int {
	sum := resource.Quantity{}
	for i := 1; i <= l.GetTop(); i++ {
		sum.Add(quantityArg(l, i))
	}
	l.Push(lua.LString(sum.String()))
	return 1
}

// getResourceQuantity(q) returns the quantity as a number ("1500m" is 1.5).
func getResourceQuantity(l *lua.LState) int {
	if l.GetTop() != 1 {
		l.RaiseError("getResourceQuantity takes one argument")
		return 0
	}
	q := quantityArg(l, 1)
	f := q.AsApproximateFloat64()
	if f < 0 || math.IsInf(f, 0) {
		l.RaiseError("quantity %s has no usable numeric value", q.String())
		return 0
	}
	l.Push(lua.LNumber(f))
	return 1
}

// maxQuantityLen bounds a resource quantity a script passes in.
const maxQuantityLen = 128

func quantityArg(l *lua.LState, i int) resource.Quantity {
	switch v := l.Get(i).(type) {
	case *lua.LNilType:
		return resource.Quantity{}
	case lua.LString:
		// Parsing works in big decimals: a quantity of half a million digits allocated
		// over a GiB. A real one is a few dozen bytes.
		if len(v) > maxQuantityLen {
			l.ArgError(i, fmt.Sprintf("a resource quantity of %d bytes is longer than %d", len(v), maxQuantityLen))
		}
		q, err := resource.ParseQuantity(string(v))
		if err != nil {
			l.ArgError(i, fmt.Sprintf("not a resource quantity: %v", err))
		}
		return q
	default:
		l.TypeError(i, lua.LTString)
		return resource.Quantity{}
	}
}

// accuratePodRequirements(podTemplate) returns what one replica asks of a node: its
// node claim (node selector, tolerations, required node affinity) and resource request
// (the larger of its containers' sum and its largest init container, plus overhead), or nil
// when it asks nothing.
func accuratePodRequirements(l *lua.LState) int {
	if l.GetTop() != 1 {
		l.RaiseError("accuratePodRequirements takes one argument")
		return 0
	}
	tmpl := podTemplateArg(l, 1)
	req := map[string]any{}
	claim := map[string]any{}
	spec := tmpl.Spec
	if len(spec.NodeSelector) > 0 {
		claim["nodeSelector"] = spec.NodeSelector
	}
	if len(spec.Tolerations) > 0 {
		claim["tolerations"] = spec.Tolerations
	}
	if spec.Affinity != nil && spec.Affinity.NodeAffinity != nil && spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		claim["hardNodeAffinity"] = spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	}
	if len(claim) > 0 {
		req["nodeClaim"] = claim
	}
	if request := podRequest(&spec); len(request) > 0 {
		req["resourceRequest"] = request
	}
	if len(req) == 0 {
		l.Push(lua.LNil)
		return 1
	}
	pushJSON(l, req)
	return 1
}

func podRequest(spec *corev1.PodSpec) corev1.ResourceList {
	total := corev1.ResourceList{}
	for _, c := range spec.Containers {
		for name, q := range c.Resources.Requests {
			sum := total[name]
			sum.Add(q)
			total[name] = sum
		}
	}
	for _, c := range spec.InitContainers {
		for name, q := range c.Resources.Requests {
			if cur, ok := total[name]; !ok || q.Cmp(cur) > 0 {
				total[name] = q.DeepCopy()
			}
		}
	}
	for name, q := range spec.Overhead {
		sum := total[name]
		sum.Add(q)
		total[name] = sum
	}
	return total
}

// getPodDependencies(podTemplate, namespace) lists the ConfigMaps, Secrets, ServiceAccount
// and PersistentVolumeClaims a pod of the template uses, in namespace (nil: "default").
func getPodDependencies(l *lua.LState) int {
	if l.GetTop() != 2 {
		l.RaiseError("getPodDependencies takes two arguments")
		return 0
	}
	tmpl := podTemplateArg(l, 1)
	namespace := "default"
	switch v := l.Get(2).(type) {
	case *lua.LNilType:
	case lua.LString, lua.LNumber:
		namespace = v.String()
	default:
		l.TypeError(2, lua.LTString)
	}
	configMaps, secrets, claims := map[string]bool{}, map[string]bool{}, map[string]bool{}
	spec := tmpl.Spec
	for _, s := range spec.ImagePullSecrets {
		secrets[s.Name] = true
	}
	for _, v := range spec.Volumes {
		switch {
		case v.ConfigMap != nil:
			configMaps[v.ConfigMap.Name] = true
		case v.Secret != nil:
			secrets[v.Secret.SecretName] = true
		case v.PersistentVolumeClaim != nil:
			claims[v.PersistentVolumeClaim.ClaimName] = true
		case v.Projected != nil:
			for _, src := range v.Projected.Sources {
				if src.ConfigMap != nil {
					configMaps[src.ConfigMap.Name] = true
				}
				if src.Secret != nil {
					secrets[src.Secret.Name] = true
				}
			}
		}
	}
	containers := append(append([]corev1.Container{}, spec.InitContainers...), spec.Containers...)
	for _, c := range containers {
		for _, from := range c.EnvFrom {
			if from.ConfigMapRef != nil {
				configMaps[from.ConfigMapRef.Name] = true
			}
			if from.SecretRef != nil {
				secrets[from.SecretRef.Name] = true
			}
		}
		for _, env := range c.Env {
			if env.ValueFrom == nil {
				continue
			}
			if ref := env.ValueFrom.ConfigMapKeyRef; ref != nil {
				configMaps[ref.Name] = true
			}
			if ref := env.ValueFrom.SecretKeyRef; ref != nil {
				secrets[ref.Name] = true
			}
		}
	}
	var deps []any
	add := func(kind string, set map[string]bool) {
		delete(set, "")
		for _, name := range sortedStrings(set) {
			deps = append(deps, map[string]any{"apiVersion": "v1", "kind": kind, "namespace": namespace, "name": name})
		}
	}
	add("ConfigMap", configMaps)
	add("Secret", secrets)
	if sa := spec.ServiceAccountName; sa != "" && sa != "default" {
		add("ServiceAccount", map[string]bool{sa: true})
	}
	add("PersistentVolumeClaim", claims)
	if deps == nil {
		deps = []any{}
	}
	pushJSON(l, deps)
	return 1
}

func podTemplateArg(l *lua.LState, i int) *corev1.PodTemplateSpec {
	t := l.CheckTable(i)
	shapes := newShapes()
	v, err := fromLua(t, shapes)
	if err != nil {
		l.ArgError(i, err.Error())
	}
	// A value's trip through JSON and the pod types costs about fifty matcher steps.
	chargeSteps(l, "kube", shapes.values*50)
	raw, err := json.Marshal(v)
	if err != nil {
		l.ArgError(i, err.Error())
	}
	tmpl := &corev1.PodTemplateSpec{}
	if err := json.Unmarshal(raw, tmpl); err != nil {
		l.ArgError(i, fmt.Sprintf("not a pod template: %v", err))
	}
	return tmpl
}

// pushJSON pushes a Go value, through its JSON form, as a Lua value.
func pushJSON(l *lua.LState, v any) {
	raw, err := json.Marshal(v)
	if err != nil {
		l.RaiseError("encoding a result: %v", err)
		return
	}
	var generic any
	if err := json.Unmarshal(raw, &generic); err != nil {
		l.RaiseError("encoding a result: %v", err)
		return
	}
	lv, err := toLua(l, generic)
	if err != nil {
		l.RaiseError("encoding a result: %v", err)
		return
	}
	l.Push(lv)
}
