// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A Case is one generated input: a resource template, the binding the scheduler would have
// left for it, and the override policies and interpreter customizations that reach it. Its
// objects are plain API objects, so a case can be written out as a golden case
// (pkg/render/testdata/golden) and fed to either controller.
type Case struct {
	// Index is the case's number in its run; (seed, Index) regenerates it.
	Index          int
	Namespace      string // the case's own namespace; every namespaced object lives in it
	Template       *unstructured.Unstructured
	Binding        *unstructured.Unstructured
	Policies       []*unstructured.Unstructured
	Customizations []*unstructured.Unstructured
	// Webhooks is the batch's ResourceInterpreterWebhookConfiguration when its rules
	// reach the template's kind.
	Webhooks *unstructured.Unstructured
}

// Objects returns the case's objects in the order they are created: customizations and
// policies before the template and the binding, so neither controller renders without them.
func (c *Case) Objects() []*unstructured.Unstructured {
	out := append([]*unstructured.Unstructured(nil), c.Customizations...)
	if c.Webhooks != nil {
		out = append(out, c.Webhooks)
	}
	out = append(out, c.Policies...)
	return append(out, c.Template, c.Binding)
}

// Members are the clusters that have joined (a Cluster object and an execution namespace);
// absentMember is scheduled now and then but never joined.
var Members = []string{"member1", "member2", "member3", "member4", "member5"}

const absentMember = "member9"

// clusterObjects are the Cluster objects of Members: labels, provider, region and zones that
// override rules target.
func clusterObjects() []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	envs := []string{"prod", "staging", "prod", "dev", "prod"}
	providers := []string{"aws", "gcp", "aws", "azure", "gcp"}
	regions := []string{"eu-west-1", "us-central1", "us-east-1", "westeurope", "europe-west4"}
	for i, m := range Members {
		out = append(out, obj("cluster.karmada.io/v1alpha1", "Cluster", "", m, map[string]any{
			"metadata": map[string]any{"labels": map[string]any{"env": envs[i], "tier": fmt.Sprint("t", i%2)}},
			"spec": map[string]any{"syncMode": "Push", "provider": providers[i], "region": regions[i],
				"zones": []any{regions[i] + "a", regions[i] + "b"}},
		}))
	}
	return out
}

// The kinds a template may be, each with how to build one. workload says whether the
// binding carries replicas (Karmada's IsWorkload).
type kindSpec struct {
	apiVersion, kind string
	clusterScoped    bool
	workload         bool
	build            func(g *gen, name string) map[string]any
}

var kinds = []kindSpec{
	{"apps/v1", "Deployment", false, true, func(g *gen, n string) map[string]any { return g.podOwner(n, "replicas") }},
	{"apps/v1", "StatefulSet", false, true, func(g *gen, n string) map[string]any {
		o := g.podOwner(n, "replicas")
		o["spec"].(map[string]any)["serviceName"] = n
		return o
	}},
	{"apps/v1", "ReplicaSet", false, true, func(g *gen, n string) map[string]any { return g.podOwner(n, "replicas") }},
	{"batch/v1", "Job", false, true, func(g *gen, n string) map[string]any { return g.job(n, true) }},
	{"v1", "Pod", false, false, func(g *gen, n string) map[string]any {
		return map[string]any{"metadata": g.meta(n), "spec": g.podSpec(n, "Always")}
	}},
	{"v1", "Service", false, false, func(g *gen, n string) map[string]any {
		spec := map[string]any{"selector": map[string]any{"app": n},
			"ports": []any{map[string]any{"port": int64(80), "targetPort": int64(8080)}}}
		if g.chance(0.3) {
			spec["clusterIP"] = "None"
		}
		return map[string]any{"metadata": g.meta(n), "spec": spec}
	}},
	{"v1", "ConfigMap", false, false, func(g *gen, n string) map[string]any {
		return map[string]any{"metadata": g.meta(n), "data": map[string]any{
			"config.json": `{"level":"info","replicas":2,"features":{"a":true}}`,
			"config.yaml": "level: info\nreplicas: 2\nfeatures:\n  a: true\n",
			"plain":       g.pick("a", "b", "c")}}
	}},
	{"v1", "Secret", false, false, func(g *gen, n string) map[string]any {
		return map[string]any{"metadata": g.meta(n), "type": "Opaque", "stringData": map[string]any{"token": "s3cr3t"}}
	}},
	{"v1", "ServiceAccount", false, false, func(g *gen, n string) map[string]any {
		o := map[string]any{"metadata": g.meta(n)}
		if g.chance(0.5) {
			o["secrets"] = []any{map[string]any{"name": n + "-token-abcde"}, map[string]any{"name": n + "-pull"}}
		}
		return o
	}},
	{"v1", "PersistentVolumeClaim", false, false, func(g *gen, n string) map[string]any {
		m := g.meta(n)
		if g.chance(0.6) {
			m["annotations"].(map[string]any)["volume.kubernetes.io/selected-node"] = g.pick("node-1", "")
		}
		return map[string]any{"metadata": m, "spec": map[string]any{"accessModes": []any{"ReadWriteOnce"},
			"resources": map[string]any{"requests": map[string]any{"storage": "1Gi"}}}}
	}},
	// Bundled third-party customizations (pkg/interpreter/thirdparty).
	{"apps.kruise.io/v1alpha1", "CloneSet", false, true, func(g *gen, n string) map[string]any { return g.podOwner(n, "replicas") }},
	{"apps.kruise.io/v1beta1", "StatefulSet", false, true, func(g *gen, n string) map[string]any { return g.podOwner(n, "replicas") }},
	{"apps.kruise.io/v1alpha1", "BroadcastJob", false, true, func(g *gen, n string) map[string]any { return g.job(n, true) }},
	{"apps.kruise.io/v1alpha1", "UnitedDeployment", false, true, func(g *gen, n string) map[string]any {
		return map[string]any{"metadata": g.meta(n), "spec": map[string]any{"replicas": int64(g.intn(7)),
			"selector": map[string]any{"matchLabels": map[string]any{"app": n}}}}
	}},
	{"argoproj.io/v1alpha1", "Workflow", false, true, func(g *gen, n string) map[string]any {
		return map[string]any{"metadata": g.meta(n), "spec": map[string]any{"entrypoint": "main", "parallelism": int64(1 + g.intn(4)),
			"templates": []any{map[string]any{"name": "main", "container": map[string]any{"image": images[g.intn(len(images))]}}}}}
	}},
	{"ray.io/v1", "RayService", false, true, func(g *gen, n string) map[string]any {
		var groups []any
		for i, m := 0, 1+g.intn(2); i < m; i++ {
			groups = append(groups, map[string]any{"groupName": fmt.Sprint("w", i), "replicas": int64(g.intn(4)),
				"minReplicas": int64(0), "maxReplicas": int64(10), "template": map[string]any{"spec": g.podSpec(n, "Always")}})
		}
		return map[string]any{"metadata": g.meta(n), "spec": map[string]any{"rayClusterConfig": map[string]any{
			"headGroupSpec":    map[string]any{"template": map[string]any{"spec": g.podSpec(n, "Always")}},
			"workerGroupSpecs": groups}}}
	}},
	// CRD kinds of the fuzzer's own, with and without a customization (see customizationFor).
	{"fuzz.example.com/v1", "Widget", false, true, func(g *gen, n string) map[string]any {
		return map[string]any{"metadata": g.meta(n), "spec": map[string]any{"replicas": int64(g.intn(6)), "size": g.pick("s", "m")}}
	}},
	{"fuzz.example.com/v1", "Job", false, true, func(g *gen, n string) map[string]any { return g.job(n, false) }},
	{"rbac.authorization.k8s.io/v1", "ClusterRole", true, false, func(g *gen, n string) map[string]any {
		return map[string]any{"metadata": g.meta(n), "rules": []any{map[string]any{
			"apiGroups": []any{""}, "resources": []any{"pods"}, "verbs": []any{"get", "list"}}}}
	}},
}

// customizationScripts are the ReplicaRevision scripts a fuzz kind may get in a batch.
var customizationScripts = []string{
	"function ReviseReplica(obj, desiredReplica)\n  obj.spec.replicas = desiredReplica\n  return obj\nend\n",
	"function ReviseReplica(obj, desiredReplica)\n  obj.spec.parallelism = desiredReplica * 2\n  return obj\nend\n",
	"function ReviseReplica(obj, desiredReplica)\n  if obj.spec.replicas ~= nil then obj.spec.replicas = desiredReplica + 1 end\n  return obj\nend\n",
}

// Customizations returns a batch's customizations: each fuzz kind gets one, or none, by the
// batch's seed. Customizations are cluster-wide, one per kind, so a batch shares them.
func Customizations(seed uint64, batch int) []*unstructured.Unstructured {
	r := rand.New(rand.NewPCG(seed, uint64(1_000_000+batch)))
	var out []*unstructured.Unstructured
	for _, k := range kinds {
		if k.apiVersion != "fuzz.example.com/v1" || r.Float64() < 0.4 {
			continue
		}
		script := customizationScripts[r.IntN(len(customizationScripts))]
		out = append(out, obj("config.karmada.io/v1alpha1", "ResourceInterpreterCustomization", "",
			fmt.Sprintf("fuzz-%s-b%d", lower(k.kind), batch), map[string]any{"spec": map[string]any{
				"target":         map[string]any{"apiVersion": k.apiVersion, "kind": k.kind},
				"customizations": map[string]any{"replicaRevision": map[string]any{"luaScript": script}},
			}}))
	}
	return out
}

// webhookAnswers are the paths of the fuzzer's interpreter webhook (webhookServer), each an
// answer to ReviseReplica.
var webhookAnswers = []string{"/replicas", "/double-parallelism", "/refuse"}

// Webhooks returns a batch's ResourceInterpreterWebhookConfiguration, or nil: 1–2 webhooks
// at url (the fuzzer's server, trusted through caBundle), each revising the replicas of 1–2
// kinds with one of webhookAnswers. Configurations are cluster-wide, so a batch shares one.
func Webhooks(seed uint64, batch int, url string, caBundle []byte) *unstructured.Unstructured {
	r := rand.New(rand.NewPCG(seed, uint64(2_000_000+batch)))
	if url == "" || r.Float64() < 0.3 {
		return nil
	}
	candidates := []kindSpec{}
	for _, k := range kinds {
		if k.workload {
			candidates = append(candidates, k)
		}
	}
	var hooks []any
	for i, n := 0, 1+r.IntN(2); i < n; i++ {
		var rules []any
		for j, m := 0, 1+r.IntN(2); j < m; j++ {
			k := candidates[r.IntN(len(candidates))]
			group, version, _ := strings.Cut(k.apiVersion, "/")
			if version == "" {
				group, version = "", group
			}
			rules = append(rules, map[string]any{"operations": []any{"ReviseReplica"},
				"apiGroups": []any{group}, "apiVersions": []any{version}, "kinds": []any{k.kind}})
		}
		hooks = append(hooks, map[string]any{
			"name":                       fmt.Sprintf("hook%d.fuzz.example.com", i),
			"clientConfig":               map[string]any{"url": url + webhookAnswers[r.IntN(len(webhookAnswers))], "caBundle": base64.StdEncoding.EncodeToString(caBundle)},
			"rules":                      rules,
			"timeoutSeconds":             int64(3),
			"interpreterContextVersions": []any{"v1alpha1"},
		})
	}
	return obj("config.karmada.io/v1alpha1", "ResourceInterpreterWebhookConfiguration", "", fmt.Sprintf("fuzz-b%d", batch),
		map[string]any{"webhooks": hooks})
}

// reaches tells whether a webhook configuration has a rule for kind.
func reaches(config *unstructured.Unstructured, apiVersion, kind string) bool {
	if config == nil {
		return false
	}
	hooks, _, _ := unstructured.NestedSlice(config.Object, "webhooks")
	group, version, _ := strings.Cut(apiVersion, "/")
	if version == "" {
		group, version = "", group
	}
	for _, h := range hooks {
		rules, _, _ := unstructured.NestedSlice(h.(map[string]any), "rules")
		for _, rule := range rules {
			rule := rule.(map[string]any)
			if slices.Contains(rule["apiGroups"].([]any), any(group)) && slices.Contains(rule["apiVersions"].([]any), any(version)) &&
				slices.Contains(rule["kinds"].([]any), any(kind)) {
				return true
			}
		}
	}
	return false
}

// Generate returns case index of the run with this seed; customizations and webhooks are
// the batch's.
func Generate(seed uint64, index int, customizations []*unstructured.Unstructured, webhooks ...*unstructured.Unstructured) *Case {
	g := &gen{r: rand.New(rand.NewPCG(seed, uint64(index)))}
	k := kinds[g.intn(len(kinds))]
	c := &Case{Index: index, Namespace: fmt.Sprintf("fuzz-%d", index)}
	name := fmt.Sprintf("%s-%d", lower(k.kind), index)
	ns := c.Namespace
	if k.clusterScoped {
		ns = ""
	}
	c.Template = obj(k.apiVersion, k.kind, ns, name, k.build(g, name))
	for _, cz := range customizations {
		target, _, _ := unstructured.NestedStringMap(cz.Object, "spec", "target")
		if target["apiVersion"] == k.apiVersion && target["kind"] == k.kind {
			c.Customizations = append(c.Customizations, cz)
		}
	}
	for _, w := range webhooks {
		if reaches(w, k.apiVersion, k.kind) {
			c.Webhooks = w
		}
	}
	c.Binding = g.binding(k, c.Template, c.Namespace)
	for i, n := 0, g.intn(3); i < n; i++ {
		c.Policies = append(c.Policies, g.policy(k, c, i))
	}
	return c
}

// gen draws one case's choices.
type gen struct{ r *rand.Rand }

func (g *gen) intn(n int) int          { return g.r.IntN(n) }
func (g *gen) chance(p float64) bool   { return g.r.Float64() < p }
func (g *gen) pick(s ...string) string { return s[g.intn(len(s))] }

func (g *gen) meta(name string) map[string]any {
	labels := map[string]any{"app": name}
	if g.chance(0.5) {
		labels["team"] = g.pick("web", "data", "infra")
	}
	annotations := map[string]any{}
	switch g.intn(6) {
	case 0:
		annotations["work.karmada.io/conflict-resolution"] = g.pick("overwrite", "abort", "bogus")
	case 1:
		annotations["deployment.kubernetes.io/revision"] = "3"
	case 2:
		annotations["example.com/note"] = "kept"
	}
	return map[string]any{"labels": labels, "annotations": annotations}
}

var images = []string{
	"nginx", "nginx:1.27", "docker.io/library/nginx:1.27", "registry.k8s.io/pause:3.9",
	"nginx:1.27@sha256:7031c1b283388d2c2e09b57badb803c05ebed362dc88d84b480cc47f72a21097",
	"localhost:5000/team/app:dev", "registry.k8s.io/pause@sha256:7031c1b283388d2c2e09b57badb803c05ebed362dc88d84b480cc47f72a21097",
}

func (g *gen) podSpec(name, restart string) map[string]any {
	containers := []any{}
	for i, n := 0, 1+g.intn(2); i < n; i++ {
		c := map[string]any{"name": fmt.Sprint("c", i), "image": images[g.intn(len(images))]}
		if g.chance(0.5) {
			c["command"] = []any{"/bin/" + name, "--serve"}
		}
		if g.chance(0.5) {
			c["args"] = []any{"--port=8080"}
		}
		containers = append(containers, c)
	}
	return map[string]any{"restartPolicy": restart, "containers": containers}
}

func (g *gen) podOwner(name, replicasField string) map[string]any {
	spec := map[string]any{
		"selector": map[string]any{"matchLabels": map[string]any{"app": name}},
		"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": name}}, "spec": g.podSpec(name, "Always")},
	}
	if g.chance(0.9) {
		spec[replicasField] = int64(g.intn(7))
	}
	return map[string]any{"metadata": g.meta(name), "spec": spec}
}

func (g *gen) job(name string, batch bool) map[string]any {
	spec := map[string]any{"parallelism": int64(1 + g.intn(4))}
	if g.chance(0.8) {
		spec["completions"] = int64(g.intn(12))
	}
	if batch {
		spec["template"] = map[string]any{"spec": g.podSpec(name, "Never")}
		if g.chance(0.3) {
			spec["ttlSecondsAfterFinished"] = int64(100)
		}
	}
	return map[string]any{"metadata": g.meta(name), "spec": spec}
}

// binding is what Karmada's scheduler would leave: clusters with replicas (Duplicated or
// Divided, uneven remainders, zero), sometimes requiredBy, eviction tasks, suspension.
func (g *gen) binding(k kindSpec, template *unstructured.Unstructured, namespace string) *unstructured.Unstructured {
	clusters := g.clusters()
	replicas := int64(0)
	if k.workload {
		replicas = int64(g.intn(8))
	}
	spec := map[string]any{"resource": map[string]any{"apiVersion": k.apiVersion, "kind": k.kind, "name": template.GetName()}}
	if !k.clusterScoped {
		spec["resource"].(map[string]any)["namespace"] = namespace
	}
	divided := g.chance(0.5)
	if replicas > 0 {
		spec["replicas"] = replicas
		mode := "Duplicated"
		if divided {
			mode = "Divided"
		}
		spec["placement"] = map[string]any{"replicaScheduling": map[string]any{"replicaSchedulingType": mode}}
	}
	var targets []any
	left := replicas
	for i, c := range clusters {
		share := replicas
		if divided {
			share = int64(0)
			if left > 0 {
				share = int64(g.intn(int(left) + 1))
			}
			if i == len(clusters)-1 {
				share = left
			}
			left -= share
		}
		t := map[string]any{"name": c}
		if share > 0 {
			t["replicas"] = share
		}
		targets = append(targets, t)
	}
	spec["clusters"] = targets
	if g.chance(0.15) {
		spec["requiredBy"] = []any{map[string]any{"namespace": namespace, "name": "dependant",
			"clusters": []any{map[string]any{"name": Members[g.intn(len(Members))], "replicas": int64(g.intn(3))}}}}
	}
	if g.chance(0.1) {
		spec["gracefulEvictionTasks"] = []any{map[string]any{"fromCluster": Members[g.intn(len(Members))],
			"purgeMode": g.pick("Gracefully", "Never", "Directly"), "reason": "TaintUntolerated", "producer": "fuzz"}}
	}
	switch g.intn(10) {
	case 0:
		spec["suspension"] = map[string]any{"dispatching": true}
	case 1:
		spec["suspension"] = map[string]any{"dispatchingOnClusters": map[string]any{"clusterNames": []any{clusters[0]}}}
	}
	if g.chance(0.2) {
		spec["preserveResourcesOnDeletion"] = true
	}
	if c := g.pick("", "", "Overwrite", "Abort"); c != "" {
		spec["conflictResolution"] = c
	}
	id := fmt.Sprintf("%08x-0000-4000-8000-%012x", g.r.Uint32(), g.r.Uint64()&0xffffffffffff)
	if k.clusterScoped {
		return obj("work.karmada.io/v1alpha2", "ClusterResourceBinding", "", template.GetName()+"-"+lower(k.kind), map[string]any{
			"metadata": map[string]any{"labels": map[string]any{"clusterresourcebinding.karmada.io/permanent-id": id}}, "spec": spec})
	}
	return obj("work.karmada.io/v1alpha2", "ResourceBinding", namespace, template.GetName()+"-"+lower(k.kind), map[string]any{
		"metadata": map[string]any{"labels": map[string]any{"resourcebinding.karmada.io/permanent-id": id}}, "spec": spec})
}

// clusters picks 1–4 distinct joined members, now and then one that never joined.
func (g *gen) clusters() []string {
	pool := slices.Clone(Members)
	g.r.Shuffle(len(pool), func(i, j int) { pool[i], pool[j] = pool[j], pool[i] })
	out := pool[:1+g.intn(4)]
	if g.chance(0.05) {
		out = append(out, absentMember)
	}
	return out
}

// policy is an OverridePolicy in the case's namespace or a ClusterOverridePolicy whose
// selectors reach only this case's template, so cases never touch each other.
func (g *gen) policy(k kindSpec, c *Case, i int) *unstructured.Unstructured {
	selector := map[string]any{"apiVersion": k.apiVersion, "kind": k.kind}
	switch g.intn(4) {
	case 0, 1:
		selector["name"] = c.Template.GetName()
	case 2:
		selector["labelSelector"] = map[string]any{"matchLabels": map[string]any{"app": c.Template.GetName()}}
		selector["name"] = c.Template.GetName()
	case 3:
		selector["name"] = c.Template.GetName() + "-other" // selects nothing
	}
	var rules []any
	for j, n := 0, 1+g.intn(2); j < n; j++ {
		rule := map[string]any{"overriders": g.overriders(k, c)}
		if t := g.targetCluster(); t != nil {
			rule["targetCluster"] = t
		}
		rules = append(rules, rule)
	}
	spec := map[string]any{"resourceSelectors": []any{selector}, "overrideRules": rules}
	name := fmt.Sprintf("p%d-%d", c.Index, i)
	if k.clusterScoped || g.chance(0.4) {
		if !k.clusterScoped {
			selector["namespace"] = c.Namespace
		}
		return obj("policy.karmada.io/v1alpha1", "ClusterOverridePolicy", "", "fuzz-"+name, map[string]any{"spec": spec})
	}
	return obj("policy.karmada.io/v1alpha1", "OverridePolicy", c.Namespace, name, map[string]any{"spec": spec})
}

func (g *gen) targetCluster() map[string]any {
	switch g.intn(6) {
	case 0:
		return map[string]any{"clusterNames": []any{Members[g.intn(len(Members))], Members[g.intn(len(Members))]}}
	case 1:
		return map[string]any{"labelSelector": map[string]any{"matchLabels": map[string]any{"env": g.pick("prod", "staging")}}}
	case 2:
		return map[string]any{"fieldSelector": map[string]any{"matchExpressions": []any{map[string]any{
			"key": g.pick("provider", "region"), "operator": g.pick("In", "NotIn"), "values": []any{g.pick("aws", "gcp", "eu-west-1")}}}}}
	case 3:
		return map[string]any{"exclude": []any{Members[g.intn(len(Members))]}}
	}
	return nil
}

func (g *gen) overriders(k kindSpec, c *Case) map[string]any {
	out := map[string]any{}
	for i, n := 0, 1+g.intn(3); i < n; i++ {
		switch g.intn(7) {
		case 0:
			o := map[string]any{"component": g.pick("Registry", "Repository", "Tag"), "operator": g.pick("add", "replace", "remove"),
				"value": g.pick("mirror.example.com", "-mirror", "v2", "1.28", "sha256:7031c1b283388d2c2e09b57badb803c05ebed362dc88d84b480cc47f72a21097")}
			if g.chance(0.3) {
				o["predicate"] = map[string]any{"path": "/spec/template/spec/containers/0/image"}
			}
			out["imageOverrider"] = append(asList(out["imageOverrider"]), o)
		case 1, 2:
			key := map[bool]string{true: "commandOverrider", false: "argsOverrider"}[g.chance(0.5)]
			out[key] = append(asList(out[key]), map[string]any{"containerName": "c0", "operator": g.pick("add", "remove"),
				"value": []any{g.pick("--verbose", "--serve", "--port=8080")}})
		case 3:
			key := map[bool]string{true: "labelsOverrider", false: "annotationsOverrider"}[g.chance(0.5)]
			out[key] = append(asList(out[key]), map[string]any{"operator": g.pick("add", "replace", "remove"),
				"value": map[string]any{g.pick("team", "app", "example.com/note", "new"): g.pick("x", "y")}})
		case 4:
			path, value := "/metadata/labels/fuzz", any("yes")
			switch g.intn(3) {
			case 1:
				path, value = "/spec/replicas", any(int64(g.intn(5)))
			case 2:
				path, value = "/metadata/name", any(c.Template.GetName()+"-renamed")
			}
			out["plaintext"] = append(asList(out["plaintext"]), map[string]any{"path": path,
				"operator": g.pick("add", "replace", "remove"), "value": value})
		case 5:
			if k.kind != "ConfigMap" {
				continue
			}
			if g.chance(0.5) {
				out["fieldOverrider"] = append(asList(out["fieldOverrider"]), map[string]any{"fieldPath": "/data/config.json",
					"json": []any{map[string]any{"subPath": g.pick("/level", "/features/b", "/replicas"), "operator": g.pick("add", "replace", "remove"), "value": "debug"}}})
			} else {
				out["fieldOverrider"] = append(asList(out["fieldOverrider"]), map[string]any{"fieldPath": "/data/config.yaml",
					"yaml": []any{map[string]any{"subPath": g.pick("/level", "/features/b"), "operator": g.pick("add", "replace", "remove"), "value": "debug"}}})
			}
		case 6:
			out["labelsOverrider"] = append(asList(out["labelsOverrider"]), map[string]any{"operator": "add",
				"value": map[string]any{"region": "eu"}})
		}
	}
	return out
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// obj builds an object of kind in namespace with name; fields are merged in (metadata too).
func obj(apiVersion, kind, namespace, name string, fields map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	for k, v := range fields {
		u.Object[k] = v
	}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetName(name)
	if namespace != "" {
		u.SetNamespace(namespace)
	}
	if len(u.GetAnnotations()) == 0 {
		unstructured.RemoveNestedField(u.Object, "metadata", "annotations")
	}
	return u
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
