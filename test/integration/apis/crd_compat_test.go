// SPDX-License-Identifier: Apache-2.0

package apis_test

import (
	"path/filepath"
	"sort"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/binding-controller/binding-controller/internal/testenv/envtestutil"
)

// stripDescriptions removes every description of a schema (they may differ in wording).
func stripDescriptions(s *apiextensionsv1.JSONSchemaProps) {
	s.Description = ""
	for k, p := range s.Properties {
		stripDescriptions(&p)
		s.Properties[k] = p
	}
	if s.Items != nil && s.Items.Schema != nil {
		stripDescriptions(s.Items.Schema)
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		stripDescriptions(s.AdditionalProperties.Schema)
	}
}

var worksSyncedColumn = apiextensionsv1.CustomResourceColumnDefinition{
	Name:     "WORKS-SYNCED",
	Type:     "string",
	JSONPath: `.status.conditions[?(@.type=="WorksSynced")].status`,
}

var _ = Describe("Generated CRDs", func() {
	ours := func(file string) *apiextensionsv1.CustomResourceDefinition {
		return loadCRD(filepath.Join(envtestutil.ProjectCRDDir(), file))
	}
	karmadas := func(file string) *apiextensionsv1.CustomResourceDefinition {
		return loadCRD(filepath.Join(envtestutil.KarmadaCRDDir(), file))
	}

	DescribeTable("match Karmada's published CRD",
		func(file, version string, isBinding bool) {
			our, their := ours(file), karmadas(file)

			Expect(our.Name).To(Equal(their.Name))
			Expect(our.Spec.Group).To(Equal(their.Spec.Group))
			Expect(our.Spec.Names).To(Equal(their.Spec.Names), "kind, listKind, plural, singular, shortNames, categories")
			Expect(our.Spec.Scope).To(Equal(their.Spec.Scope))

			// We serve exactly one version, which Karmada serves too (v1alpha2 for bindings).
			Expect(our.Spec.Versions).To(HaveLen(1))
			ourV := our.Spec.Versions[0]
			Expect(ourV.Name).To(Equal(version))
			Expect(ourV.Served).To(BeTrue())
			Expect(ourV.Storage).To(BeTrue())
			var theirV *apiextensionsv1.CustomResourceDefinitionVersion
			for i := range their.Spec.Versions {
				if their.Spec.Versions[i].Name == version {
					theirV = &their.Spec.Versions[i]
				}
			}
			Expect(theirV).NotTo(BeNil())
			Expect(theirV.Served).To(BeTrue())
			Expect(theirV.Storage).To(BeTrue(), "Karmada stores this version too")

			Expect(ourV.Subresources).To(Equal(theirV.Subresources))

			wantColumns := theirV.AdditionalPrinterColumns
			if isBinding {
				// Ours adds WORKS-SYNCED before AGE.
				n := len(wantColumns)
				Expect(wantColumns[n-1].Name).To(Equal("AGE"))
				wantColumns = append(append(append([]apiextensionsv1.CustomResourceColumnDefinition{},
					wantColumns[:n-1]...), worksSyncedColumn), wantColumns[n-1])
			}
			Expect(ourV.AdditionalPrinterColumns).To(Equal(wantColumns))

			ourSchema := ourV.Schema.OpenAPIV3Schema.DeepCopy()
			theirSchema := theirV.Schema.OpenAPIV3Schema.DeepCopy()
			if isBinding {
				// Ours preserves unknown spec and status fields; Karmada's prunes them.
				for _, field := range []string{"spec", "status"} {
					p := ourSchema.Properties[field]
					Expect(p.XPreserveUnknownFields).To(Equal(ptrTrue()), field)
					p.XPreserveUnknownFields = nil
					ourSchema.Properties[field] = p
				}
			}
			stripDescriptions(ourSchema)
			stripDescriptions(theirSchema)
			Expect(ourSchema).To(BeComparableTo(theirSchema),
				"the schema (types, formats, enums, defaults, required fields, x-kubernetes-*) must be Karmada's")
		},
		Entry("Work", "work.karmada.io_works.yaml", "v1alpha1", false),
		Entry("ResourceBinding", "work.karmada.io_resourcebindings.yaml", "v1alpha2", true),
		Entry("ClusterResourceBinding", "work.karmada.io_clusterresourcebindings.yaml", "v1alpha2", true),
		Entry("OverridePolicy", "policy.karmada.io_overridepolicies.yaml", "v1alpha1", false),
		Entry("ClusterOverridePolicy", "policy.karmada.io_clusteroverridepolicies.yaml", "v1alpha1", false),
		Entry("ResourceInterpreterCustomization", "config.karmada.io_resourceinterpretercustomizations.yaml", "v1alpha1", false),
		Entry("ResourceInterpreterWebhookConfiguration", "config.karmada.io_resourceinterpreterwebhookconfigurations.yaml", "v1alpha1", false),
	)

	It("ship a Cluster CRD shaped like Karmada's Cluster API", func() {
		crd := ours("cluster.karmada.io_clusters.yaml")
		Expect(crd.Spec.Group).To(Equal("cluster.karmada.io"))
		Expect(crd.Spec.Names.Kind).To(Equal("Cluster"))
		Expect(crd.Spec.Names.ListKind).To(Equal("ClusterList"))
		Expect(crd.Spec.Names.Plural).To(Equal("clusters"))
		Expect(crd.Spec.Scope).To(Equal(apiextensionsv1.ClusterScoped))
		Expect(crd.Spec.Versions).To(HaveLen(1))
		v := crd.Spec.Versions[0]
		Expect(v.Name).To(Equal("v1alpha1"))
		Expect(v.Subresources).NotTo(BeNil())
		Expect(v.Subresources.Status).NotTo(BeNil())
		spec := v.Schema.OpenAPIV3Schema.Properties["spec"]
		status := v.Schema.OpenAPIV3Schema.Properties["status"]
		Expect(spec.XPreserveUnknownFields).To(Equal(ptrTrue()))
		Expect(status.XPreserveUnknownFields).To(Equal(ptrTrue()))
		var props []string
		for k := range spec.Properties {
			props = append(props, k)
		}
		Expect(props).To(ContainElements("id", "syncMode", "apiEndpoint", "provider", "region", "zone", "zones", "taints"))
	})

	It("list every CRD in config/crd/kustomization.yaml", func() {
		var kustomization struct {
			Resources []string `json:"resources"`
		}
		Expect(yamlUnmarshalFile(filepath.Join(envtestutil.RepoRoot(), "config", "crd", "kustomization.yaml"), &kustomization)).To(Succeed())
		files, err := filepath.Glob(filepath.Join(envtestutil.ProjectCRDDir(), "*.yaml"))
		Expect(err).NotTo(HaveOccurred())
		var want []string
		for _, f := range files {
			want = append(want, "bases/"+filepath.Base(f))
		}
		Expect(want).To(HaveLen(12))
		got := append([]string{}, kustomization.Resources...)
		sort.Strings(got)
		Expect(got).To(Equal(want))
	})
})

var _ = Describe("Fixtures", func() {
	// Every property of the generated schemas (spec and status) must be filled by at
	// least one fixture of the kind, so that the round-trip tests cover every field.
	DescribeTable("fill every field of the generated schema",
		func(crdFile string, fixtures ...string) {
			crd := loadCRD(filepath.Join(envtestutil.ProjectCRDDir(), crdFile))
			Expect(crd.Spec.Versions).To(HaveLen(1))
			root := servedSchema(crd, crd.Spec.Versions[0].Name)
			want := map[string]bool{}
			got := map[string]bool{}
			for field, p := range root.Properties {
				if !objectMetaField[field] {
					schemaPaths(p, "."+field, want)
				}
			}
			for _, f := range fixtures {
				m := loadMap(f)
				for field, v := range m {
					if !objectMetaField[field] {
						dataPaths(v, root.Properties[field], "."+field, got)
					}
				}
			}
			var missing []string
			for p := range want {
				if !got[p] {
					missing = append(missing, p)
				}
			}
			sort.Strings(missing)
			Expect(missing).To(BeEmpty(), "schema fields no fixture fills")
			Expect(len(got)).To(BeNumerically(">", 10))
		},
		Entry("Work", "work.karmada.io_works.yaml", "work.yaml"),
		Entry("ResourceBinding", "work.karmada.io_resourcebindings.yaml", "resourcebinding.yaml", "clusterresourcebinding.yaml"),
		Entry("ClusterResourceBinding", "work.karmada.io_clusterresourcebindings.yaml", "resourcebinding.yaml", "clusterresourcebinding.yaml"),
		Entry("OverridePolicy", "policy.karmada.io_overridepolicies.yaml", "overridepolicy.yaml", "clusteroverridepolicy.yaml"),
		Entry("ClusterOverridePolicy", "policy.karmada.io_clusteroverridepolicies.yaml", "overridepolicy.yaml", "clusteroverridepolicy.yaml"),
		Entry("Cluster", "cluster.karmada.io_clusters.yaml", "cluster.yaml"),
		Entry("ResourceInterpreterCustomization", "config.karmada.io_resourceinterpretercustomizations.yaml", "resourceinterpretercustomization.yaml"),
		Entry("ResourceInterpreterWebhookConfiguration", "config.karmada.io_resourceinterpreterwebhookconfigurations.yaml", "resourceinterpreterwebhookconfiguration.yaml"),
		Entry("RolloutPolicy", "rollouts.binding-controller.io_rolloutpolicies.yaml", "rolloutpolicy.yaml", "clusterrolloutpolicy.yaml"),
		Entry("ClusterRolloutPolicy", "rollouts.binding-controller.io_clusterrolloutpolicies.yaml", "rolloutpolicy.yaml", "clusterrolloutpolicy.yaml"),
		Entry("BindingRollout", "rollouts.binding-controller.io_bindingrollouts.yaml", "bindingrollout.yaml", "clusterbindingrollout.yaml"),
		Entry("ClusterBindingRollout", "rollouts.binding-controller.io_clusterbindingrollouts.yaml", "bindingrollout.yaml", "clusterbindingrollout.yaml"),
	)

	It("decode strictly into the Go types", func() {
		for _, fc := range fixtureCases {
			obj := fc.New()
			loadTyped(fc.File, obj)
			Expect(obj.GetObjectKind().GroupVersionKind()).To(Equal(fc.GVK), fc.File)
		}
	})
})
