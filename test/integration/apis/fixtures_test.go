// SPDX-License-Identifier: Apache-2.0

package apis_test

import (
	"encoding/json"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/cluster/v1alpha1"
	configv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/config/v1alpha1"
	policyv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/policy/v1alpha1"
	rolloutsv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/rollouts/v1alpha1"
	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
)

// fixtureCase is one fixture file and how to handle it.
type fixtureCase struct {
	// File is the fixture's file name in test/testdata/fixtures.
	File string
	// GVK of the fixture.
	GVK schema.GroupVersionKind
	// CRDFile is the name of the CRD file (in config/crd/bases and, when InKarmadaCRDs,
	// in test/testdata/karmada-crds) that serves the kind.
	CRDFile string
	// New returns an empty typed object of the kind.
	New func() client.Object
	// HasStatus tells whether the kind has a status subresource.
	HasStatus bool
	// InKarmadaCRDs tells whether Karmada's reference CRDs serve the kind.
	InKarmadaCRDs bool
	// Check asserts concrete values of the object read back from the API server.
	Check func(g Gomega, obj client.Object)
}

var fixtureCases = []fixtureCase{
	{
		File:          "work.yaml",
		GVK:           workv1alpha1.GroupVersion.WithKind("Work"),
		CRDFile:       "work.karmada.io_works.yaml",
		New:           func() client.Object { return &workv1alpha1.Work{} },
		HasStatus:     true,
		InKarmadaCRDs: true,
		Check: func(g Gomega, obj client.Object) {
			w := obj.(*workv1alpha1.Work)
			g.Expect(w.Namespace).To(Equal(workv1alpha1.ExecutionNamespacePrefix + "member1"))
			g.Expect(w.Spec.SuspendDispatching).To(Equal(ptr.To(true)))
			g.Expect(w.Spec.PreserveResourcesOnDeletion).To(Equal(ptr.To(true)))
			g.Expect(w.Spec.Workload.Manifests).To(HaveLen(2))
			var deploy struct {
				Kind     string
				Metadata metav1.ObjectMeta
				Spec     struct{ Replicas int32 }
			}
			g.Expect(json.Unmarshal(w.Spec.Workload.Manifests[0].Raw, &deploy)).To(Succeed())
			g.Expect(deploy.Kind).To(Equal("Deployment"))
			g.Expect(deploy.Spec.Replicas).To(Equal(int32(3)))
			g.Expect(deploy.Metadata.Labels).To(HaveKeyWithValue(workv1alpha1.ManagedByKarmadaLabel, workv1alpha1.ManagedByKarmadaLabelValue))
			g.Expect(deploy.Metadata.Annotations).To(HaveKeyWithValue(workv1alpha1.WorkNameAnnotation, "nginx-687f7fb96f"))
			g.Expect(deploy.Metadata.Annotations).To(HaveKeyWithValue(workv1alpha1.ConflictResolutionAnnotation, workv1alpha1.ConflictResolutionOverwrite))
			g.Expect(w.Annotations).To(HaveKeyWithValue(policyv1alpha1.AppliedOverridesAnnotation, ContainSubstring("registry.example.io")))
			g.Expect(w.Status.Conditions).To(HaveLen(2))
			g.Expect(w.Status.Conditions[0].Type).To(Equal(workv1alpha1.WorkApplied))
			g.Expect(w.Status.Conditions[0].Status).To(Equal(metav1.ConditionTrue))
			g.Expect(w.Status.ManifestStatuses).To(HaveLen(2))
			g.Expect(w.Status.ManifestStatuses[0].Identifier).To(Equal(workv1alpha1.ResourceIdentifier{
				Ordinal: 0, Group: "apps", Version: "v1", Kind: "Deployment", Resource: "deployments", Namespace: "default", Name: "nginx",
			}))
			g.Expect(w.Status.ManifestStatuses[0].Health).To(Equal(workv1alpha1.ResourceHealthy))
			g.Expect(w.Status.ManifestStatuses[0].Status).NotTo(BeNil())
			g.Expect(string(w.Status.ManifestStatuses[0].Status.Raw)).To(ContainSubstring(`"readyReplicas":3`))
			g.Expect(w.Status.ManifestStatuses[1].Identifier.Ordinal).To(Equal(1))
			g.Expect(w.Status.ManifestStatuses[1].Health).To(Equal(workv1alpha1.ResourceUnknown))
		},
	},
	{
		File:          "resourcebinding.yaml",
		GVK:           workv1alpha2.GroupVersion.WithKind("ResourceBinding"),
		CRDFile:       "work.karmada.io_resourcebindings.yaml",
		New:           func() client.Object { return &workv1alpha2.ResourceBinding{} },
		HasStatus:     true,
		InKarmadaCRDs: true,
		Check: func(g Gomega, obj client.Object) {
			rb := obj.(*workv1alpha2.ResourceBinding)
			g.Expect(rb.Labels).To(HaveKeyWithValue(workv1alpha2.ResourceBindingPermanentIDLabel, "4c8b1f5e-5b3a-4d6e-9f1a-0c2d3e4f5a6b"))
			s := rb.Spec
			g.Expect(s.Resource).To(Equal(workv1alpha2.ObjectReference{
				APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "nginx",
				UID: "7f0c9a52-0d3b-4d62-9e4d-2b8f7c6a1e11", ResourceVersion: "12345",
			}))
			g.Expect(s.Replicas).To(Equal(int32(5)))
			g.Expect(s.PropagateDeps).To(BeTrue())
			g.Expect(s.ReplicaRequirements.ResourceRequest.Cpu().Equal(resource.MustParse("250m"))).To(BeTrue())
			g.Expect(s.ReplicaRequirements.NodeClaim.Tolerations[0].TolerationSeconds).To(Equal(ptr.To[int64](3600)))
			g.Expect(s.Components[0].ReplicaRequirements.ResourceRequest).To(HaveKey(corev1.ResourceName("nvidia.com/gpu")))
			g.Expect(s.Clusters).To(Equal([]workv1alpha2.TargetCluster{
				{Name: "member1", Replicas: 3, Components: []workv1alpha2.TargetComponent{{Name: "leader", Replicas: 1}, {Name: "worker", Replicas: 2}}},
				{Name: "member2", Replicas: 2, Components: []workv1alpha2.TargetComponent{{Name: "worker", Replicas: 2}}},
			}))
			g.Expect(s.Placement.ReplicaScheduling.ReplicaSchedulingType).To(Equal(policyv1alpha1.ReplicaSchedulingTypeDivided))
			g.Expect(s.Placement.ReplicaScheduling.WeightPreference.StaticWeightList[1].Weight).To(Equal(int64(1)))
			g.Expect(s.Placement.ClusterAffinity.ExcludeClusters).To(Equal([]string{"member4"}))
			g.Expect(s.Placement.ClusterAffinity.FieldSelector.MatchExpressions[0].Values).To(Equal([]string{"eu-west-1", "eu-central-1"}))
			g.Expect(s.Placement.SpreadConstraints[1].MinGroups).To(Equal(2))
			g.Expect(s.GracefulEvictionTasks).To(HaveLen(3))
			g.Expect(s.GracefulEvictionTasks[0].FromCluster).To(Equal("member3"))
			g.Expect(s.GracefulEvictionTasks[0].PurgeMode).To(Equal(policyv1alpha1.PurgeModeGracefully))
			g.Expect(s.GracefulEvictionTasks[0].Replicas).To(Equal(ptr.To[int32](2)))
			g.Expect(s.GracefulEvictionTasks[0].GracePeriodSeconds).To(Equal(ptr.To[int32](600)))
			g.Expect(s.GracefulEvictionTasks[0].CreationTimestamp.UTC().Format("2006-01-02T15:04:05Z")).To(Equal("2026-08-01T09:55:00Z"))
			g.Expect(s.GracefulEvictionTasks[1].PurgeMode).To(Equal(policyv1alpha1.PurgeModeDirectly))
			g.Expect(s.GracefulEvictionTasks[1].SuppressDeletion).To(Equal(ptr.To(true)))
			g.Expect(s.GracefulEvictionTasks[2].PurgeMode).To(Equal(policyv1alpha1.PurgeModeNever))
			g.Expect(s.RequiredBy).To(HaveLen(2))
			g.Expect(s.RequiredBy[0]).To(Equal(workv1alpha2.BindingSnapshot{
				Namespace: "default", Name: "frontend-deployment",
				Clusters: []workv1alpha2.TargetCluster{{Name: "member6", Replicas: 1, Components: []workv1alpha2.TargetComponent{{Name: "worker", Replicas: 1}}}},
			}))
			g.Expect(s.RequiredBy[1].Namespace).To(BeEmpty())
			g.Expect(s.ConflictResolution).To(Equal(policyv1alpha1.ConflictOverwrite))
			g.Expect(s.Suspension.Dispatching).To(Equal(ptr.To(true)))
			g.Expect(s.Suspension.DispatchingOnClusters.ClusterNames).To(Equal([]string{"member2"}))
			g.Expect(s.Suspension.Scheduling).To(Equal(ptr.To(true)))
			g.Expect(s.PreserveResourcesOnDeletion).To(Equal(ptr.To(true)))
			g.Expect(s.Failover.Application.DecisionConditions.TolerationSeconds).To(Equal(ptr.To[int32](120)))
			g.Expect(s.Failover.Cluster.PurgeMode).To(Equal(policyv1alpha1.PurgeModeDirectly))
			g.Expect(s.SchedulePriority.Priority).To(Equal(int32(10)))
			g.Expect(s.WorkloadAffinityGroups.AntiAffinityGroup).To(Equal("web-tier-replicas"))
			g.Expect(s.RescheduleTriggeredAt).NotTo(BeNil())
			st := rb.Status
			g.Expect(st.SchedulerObservedGeneration).To(Equal(int64(3)))
			g.Expect(st.SchedulerObservedAffinityName).To(Equal("primary"))
			g.Expect(st.LastScheduledTime).NotTo(BeNil())
			g.Expect(st.Conditions).To(HaveLen(3))
			g.Expect(st.Conditions[2].Type).To(Equal(workv1alpha2.ConditionWorksSynced))
			g.Expect(st.Conditions[2].Status).To(Equal(metav1.ConditionTrue))
			g.Expect(st.AggregatedStatus).To(HaveLen(2))
			g.Expect(st.AggregatedStatus[0].Applied).To(BeTrue())
			g.Expect(st.AggregatedStatus[0].Health).To(Equal(workv1alpha2.ResourceHealthy))
			g.Expect(string(st.AggregatedStatus[0].Status.Raw)).To(ContainSubstring(`"resourceTemplateGeneration":2`))
			g.Expect(st.AggregatedStatus[1].AppliedMessage).To(ContainSubstring("failed to apply"))
		},
	},
	{
		File:          "clusterresourcebinding.yaml",
		GVK:           workv1alpha2.GroupVersion.WithKind("ClusterResourceBinding"),
		CRDFile:       "work.karmada.io_clusterresourcebindings.yaml",
		New:           func() client.Object { return &workv1alpha2.ClusterResourceBinding{} },
		HasStatus:     true,
		InKarmadaCRDs: true,
		Check: func(g Gomega, obj client.Object) {
			crb := obj.(*workv1alpha2.ClusterResourceBinding)
			g.Expect(crb.Namespace).To(BeEmpty())
			g.Expect(crb.Labels).To(HaveKeyWithValue(workv1alpha2.ClusterResourceBindingPermanentIDLabel, "9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a"))
			s := crb.Spec
			g.Expect(s.Resource.Kind).To(Equal("ClusterRole"))
			g.Expect(s.Resource.Namespace).To(BeEmpty())
			g.Expect(s.Clusters).To(Equal([]workv1alpha2.TargetCluster{{Name: "member1"}, {Name: "member2"}}))
			g.Expect(s.Placement.ReplicaScheduling.ReplicaSchedulingType).To(Equal(policyv1alpha1.ReplicaSchedulingTypeDuplicated))
			g.Expect(s.Placement.ClusterAffinities).To(HaveLen(2))
			g.Expect(s.Placement.ClusterAffinities[0].AffinityName).To(Equal("primary"))
			g.Expect(s.Placement.ClusterAffinities[0].ClusterNames).To(Equal([]string{"member1", "member2"}))
			g.Expect(s.Placement.ClusterAffinities[0].OverflowAffinities[0].AffinityName).To(Equal("burst-cloud"))
			g.Expect(s.Placement.ClusterAffinities[0].OverflowAffinities[0].ExcludeClusters).To(Equal([]string{"cloud9"}))
			g.Expect(s.ConflictResolution).To(Equal(policyv1alpha1.ConflictAbort))
			g.Expect(s.Suspension.Dispatching).To(BeNil())
			g.Expect(s.Suspension.DispatchingOnClusters.ClusterNames).To(Equal([]string{"member1"}))
			g.Expect(s.RequiredBy[0].Clusters[0].Replicas).To(Equal(int32(1)))
			g.Expect(crb.Status.AggregatedStatus[1].Health).To(Equal(workv1alpha2.ResourceUnknown))
		},
	},
	{
		File:          "overridepolicy.yaml",
		GVK:           policyv1alpha1.GroupVersion.WithKind("OverridePolicy"),
		CRDFile:       "policy.karmada.io_overridepolicies.yaml",
		New:           func() client.Object { return &policyv1alpha1.OverridePolicy{} },
		InKarmadaCRDs: true,
		Check: func(g Gomega, obj client.Object) {
			op := obj.(*policyv1alpha1.OverridePolicy)
			s := op.Spec
			g.Expect(s.ResourceSelectors).To(HaveLen(2))
			g.Expect(s.ResourceSelectors[1].LabelSelector.MatchLabels).To(Equal(map[string]string{"app": "nginx"}))
			g.Expect(s.OverrideRules).To(HaveLen(2))
			r := s.OverrideRules[0]
			g.Expect(r.TargetCluster.ClusterNames).To(Equal([]string{"member1"}))
			o := r.Overriders
			g.Expect(o.Plaintext).To(HaveLen(3))
			g.Expect(o.Plaintext[1].Operator).To(Equal(policyv1alpha1.OverriderOpReplace))
			g.Expect(o.Plaintext[1].Value.Raw).To(MatchJSON(`{"example.io/rollout":"canary","example.io/weight":20}`))
			g.Expect(o.Plaintext[2].Value.Raw).To(MatchJSON(`5`))
			g.Expect(o.ImageOverrider[0].Component).To(Equal(policyv1alpha1.Registry))
			g.Expect(o.ImageOverrider[1].Predicate.Path).To(Equal("/spec/template/spec/initContainers/0/image"))
			g.Expect(o.ImageOverrider[1].Component).To(Equal(policyv1alpha1.Tag))
			g.Expect(o.ImageOverrider[2].Component).To(Equal(policyv1alpha1.Repository))
			g.Expect(o.CommandOverrider[0].Value).To(Equal([]string{"nginx", "-g", "daemon off;"}))
			g.Expect(o.ArgsOverrider[0].Operator).To(Equal(policyv1alpha1.OverriderOpRemove))
			g.Expect(o.LabelsOverrider[1].Value).To(Equal(map[string]string{"app": "nginx-eu"}))
			g.Expect(o.AnnotationsOverrider[1].Value).To(Equal(map[string]string{"example.io/obsolete": ""}))
			g.Expect(o.FieldOverrider[0].JSON[1].Value.Raw).To(MatchJSON(`{"cache":true,"ttl":30}`))
			g.Expect(o.FieldOverrider[1].YAML[0].SubPath).To(Equal("/logging/level"))
			g.Expect(s.OverrideRules[1].TargetCluster).To(BeNil())
			g.Expect(s.TargetCluster.ExcludeClusters).To(Equal([]string{"legacy2"}))
			g.Expect(s.Overriders.FieldOverrider[0].YAML[0].Value.Raw).To(MatchJSON(`"compat"`))
		},
	},
	{
		File:          "clusteroverridepolicy.yaml",
		GVK:           policyv1alpha1.GroupVersion.WithKind("ClusterOverridePolicy"),
		CRDFile:       "policy.karmada.io_clusteroverridepolicies.yaml",
		New:           func() client.Object { return &policyv1alpha1.ClusterOverridePolicy{} },
		InKarmadaCRDs: true,
		Check: func(g Gomega, obj client.Object) {
			cop := obj.(*policyv1alpha1.ClusterOverridePolicy)
			g.Expect(cop.Namespace).To(BeEmpty())
			s := cop.Spec
			g.Expect(s.ResourceSelectors[1].Namespace).To(Equal("databases"))
			g.Expect(s.OverrideRules[0].Overriders.ImageOverrider[0].Value).To(Equal("mirror.internal.example.io"))
			g.Expect(s.OverrideRules[0].Overriders.Plaintext[1].Operator).To(Equal(policyv1alpha1.OverriderOpRemove))
			g.Expect(s.OverrideRules[0].Overriders.Plaintext[1].Value.Raw).To(BeEmpty())
			g.Expect(s.OverrideRules[1].Overriders.FieldOverrider[0].YAML[0].Value.Raw).To(MatchJSON(`8443`))
		},
	},
	{
		File:      "cluster.yaml",
		GVK:       clusterv1alpha1.GroupVersion.WithKind("Cluster"),
		CRDFile:   "cluster.karmada.io_clusters.yaml",
		New:       func() client.Object { return &clusterv1alpha1.Cluster{} },
		HasStatus: true,
		Check: func(g Gomega, obj client.Object) {
			cl := obj.(*clusterv1alpha1.Cluster)
			s := cl.Spec
			g.Expect(s.ID).To(Equal("2c5a8f6e-1b3d-4e7f-9a0b-3c4d5e6f7a8b"))
			g.Expect(s.SyncMode).To(Equal(clusterv1alpha1.SyncModePush))
			g.Expect(s.APIEndpoint).To(Equal("https://172.18.0.3:6443"))
			g.Expect(s.Provider).To(Equal("aws"))
			g.Expect(s.Region).To(Equal("eu-west-1"))
			g.Expect(s.Zone).To(Equal("eu-west-1a"))
			g.Expect(s.Zones).To(Equal([]string{"eu-west-1a", "eu-west-1b"}))
			g.Expect(s.Taints).To(HaveLen(1))
			g.Expect(s.Taints[0].Key).To(Equal(clusterv1alpha1.TaintClusterNotReady))
			g.Expect(s.Taints[0].Effect).To(Equal(corev1.TaintEffectNoSchedule))
			g.Expect(s.SecretRef).To(Equal(&clusterv1alpha1.LocalSecretReference{Namespace: "karmada-cluster", Name: "member1"}))
			g.Expect(cl.Status.KubernetesVersion).To(Equal("v1.37.2"))
			g.Expect(cl.Status.Conditions[0].Type).To(Equal(clusterv1alpha1.ClusterConditionReady))
		},
	},
	{
		File:          "resourceinterpretercustomization.yaml",
		GVK:           configv1alpha1.GroupVersion.WithKind("ResourceInterpreterCustomization"),
		CRDFile:       "config.karmada.io_resourceinterpretercustomizations.yaml",
		New:           func() client.Object { return &configv1alpha1.ResourceInterpreterCustomization{} },
		InKarmadaCRDs: true,
		Check: func(g Gomega, obj client.Object) {
			ric := obj.(*configv1alpha1.ResourceInterpreterCustomization)
			g.Expect(ric.Namespace).To(BeEmpty())
			g.Expect(ric.Spec.Target).To(Equal(configv1alpha1.CustomizationTarget{APIVersion: "apps.example.io/v1alpha1", Kind: "Workload"}))
			c := ric.Spec.Customizations
			g.Expect(c.ReplicaRevision.LuaScript).To(ContainSubstring("function ReviseReplica(obj, desiredReplica)"))
			g.Expect(c.ReplicaResource.LuaScript).To(ContainSubstring(`require("kube")`))
			g.Expect(c.Retention.LuaScript).To(ContainSubstring("function Retain"))
			g.Expect(c.ComponentResource.LuaScript).To(ContainSubstring("function GetComponents"))
			g.Expect(c.StatusReflection.LuaScript).To(ContainSubstring("function ReflectStatus"))
			g.Expect(c.StatusAggregation.LuaScript).To(ContainSubstring("function AggregateStatus"))
			g.Expect(c.HealthInterpretation.LuaScript).To(ContainSubstring("function InterpretHealth"))
			g.Expect(c.DependencyInterpretation.LuaScript).To(ContainSubstring("function GetDependencies"))
		},
	},
	{
		File:          "resourceinterpreterwebhookconfiguration.yaml",
		GVK:           configv1alpha1.GroupVersion.WithKind("ResourceInterpreterWebhookConfiguration"),
		CRDFile:       "config.karmada.io_resourceinterpreterwebhookconfigurations.yaml",
		New:           func() client.Object { return &configv1alpha1.ResourceInterpreterWebhookConfiguration{} },
		InKarmadaCRDs: true,
		Check: func(g Gomega, obj client.Object) {
			wc := obj.(*configv1alpha1.ResourceInterpreterWebhookConfiguration)
			g.Expect(wc.Webhooks).To(HaveLen(2))
			w := wc.Webhooks[0]
			g.Expect(w.Name).To(Equal("workloads.example.com"))
			g.Expect(w.Rules).To(HaveLen(2))
			g.Expect(w.Rules[0].Operations).To(ContainElement(configv1alpha1.InterpreterOperationReviseReplica))
			g.Expect(w.Rules[0].Rule).To(Equal(configv1alpha1.Rule{
				APIGroups: []string{"workload.example.io"}, APIVersions: []string{"v1alpha1"}, Kinds: []string{"Workload"},
			}))
			g.Expect(w.Rules[1].Operations).To(Equal([]configv1alpha1.InterpreterOperation{configv1alpha1.InterpreterOperationAll}))
			g.Expect(w.ClientConfig.URL).To(Equal(ptr.To("https://karmada-interpreter-webhook-example.karmada-system.svc:443/interpreter-workload")))
			g.Expect(string(w.ClientConfig.CABundle)).To(HavePrefix("-----BEGIN CERTIFICATE-----"))
			g.Expect(w.InterpreterContextVersions).To(Equal([]string{"v1alpha1"}))
			g.Expect(w.TimeoutSeconds).To(Equal(ptr.To[int32](3)))
			svc := wc.Webhooks[1].ClientConfig.Service
			g.Expect(svc.Namespace).To(Equal("karmada-system"))
			g.Expect(svc.Path).To(Equal(ptr.To("/interpreter-queue")))
			g.Expect(svc.Port).To(Equal(ptr.To[int32](8443)))
			g.Expect(wc.Webhooks[1].Rules[0].APIGroups).To(Equal([]string{""}))
		},
	},
	{
		File:    "rolloutpolicy.yaml",
		GVK:     rolloutsv1alpha1.GroupVersion.WithKind("RolloutPolicy"),
		CRDFile: "rollouts.binding-controller.io_rolloutpolicies.yaml",
		New:     func() client.Object { return &rolloutsv1alpha1.RolloutPolicy{} },
		Check: func(g Gomega, obj client.Object) {
			s := obj.(*rolloutsv1alpha1.RolloutPolicy).Spec
			g.Expect(s.ResourceSelectors[0]).To(Equal(policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", Namespace: "default"}))
			g.Expect(s.ResourceSelectors[1].LabelSelector.MatchExpressions[0].Values).To(Equal([]string{"stable"}))
			g.Expect(s.Stages).To(HaveLen(2))
			g.Expect(s.Stages[0].Clusters.Names).To(Equal([]string{"member1"}))
			g.Expect(s.Stages[1].MaxConcurrency.String()).To(Equal("50%"))
			g.Expect(s.Stages[1].MinSuccessTime.Duration).To(Equal(2 * time.Minute))
			g.Expect(s.Stages[1].RequireApproval).To(BeTrue())
			g.Expect(s.ProgressDeadline.Duration).To(Equal(10 * time.Minute))
			g.Expect(s.MaxFailures).To(Equal(ptr.To[int32](1)))
			g.Expect(s.RollbackOnFailure).To(BeTrue())
			g.Expect(s.RevisionHistoryLimit).To(Equal(ptr.To[int32](5)))
		},
	},
	{
		File:    "clusterrolloutpolicy.yaml",
		GVK:     rolloutsv1alpha1.GroupVersion.WithKind("ClusterRolloutPolicy"),
		CRDFile: "rollouts.binding-controller.io_clusterrolloutpolicies.yaml",
		New:     func() client.Object { return &rolloutsv1alpha1.ClusterRolloutPolicy{} },
		Check: func(g Gomega, obj client.Object) {
			p := obj.(*rolloutsv1alpha1.ClusterRolloutPolicy)
			g.Expect(p.Namespace).To(BeEmpty())
			g.Expect(p.Spec.Stages[0].MaxConcurrency.IntValue()).To(Equal(1))
			g.Expect(p.Spec.MaxFailures).To(Equal(ptr.To[int32](0)))
			g.Expect(p.Spec.RevisionHistoryLimit).To(Equal(ptr.To[int32](10)))
		},
	},
	{
		File:      "bindingrollout.yaml",
		GVK:       rolloutsv1alpha1.GroupVersion.WithKind("BindingRollout"),
		CRDFile:   "rollouts.binding-controller.io_bindingrollouts.yaml",
		New:       func() client.Object { return &rolloutsv1alpha1.BindingRollout{} },
		HasStatus: true,
		Check: func(g Gomega, obj client.Object) {
			r := obj.(*rolloutsv1alpha1.BindingRollout)
			g.Expect(r.Spec.Policy).To(Equal(rolloutsv1alpha1.PolicyReference{Kind: "RolloutPolicy", Namespace: "default", Name: "web"}))
			g.Expect(r.Status.Phase).To(Equal(rolloutsv1alpha1.PhaseProgressing))
			g.Expect(r.Status.Clusters).To(HaveLen(3))
			g.Expect(r.Status.Clusters[2].State).To(Equal(rolloutsv1alpha1.ClusterPending))
			g.Expect(r.Status.UpdatedClusters).To(Equal(int32(2)))
		},
	},
	{
		File:      "clusterbindingrollout.yaml",
		GVK:       rolloutsv1alpha1.GroupVersion.WithKind("ClusterBindingRollout"),
		CRDFile:   "rollouts.binding-controller.io_clusterbindingrollouts.yaml",
		New:       func() client.Object { return &rolloutsv1alpha1.ClusterBindingRollout{} },
		HasStatus: true,
		Check: func(g Gomega, obj client.Object) {
			r := obj.(*rolloutsv1alpha1.ClusterBindingRollout)
			g.Expect(r.Status.Phase).To(Equal(rolloutsv1alpha1.PhaseHalted))
			g.Expect(r.Status.Clusters[0].Message).To(ContainSubstring("Unhealthy"))
			g.Expect(r.Status.HealthyClusters).To(BeZero())
		},
	},
}
