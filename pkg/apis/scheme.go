// SPDX-License-Identifier: Apache-2.0

// Package apis gathers the API groups of the project: Karmada-compatible ones and its own.
package apis

import (
	"k8s.io/apimachinery/pkg/runtime"

	clusterv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/cluster/v1alpha1"
	configv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/config/v1alpha1"
	policyv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/policy/v1alpha1"
	rolloutsv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/rollouts/v1alpha1"
	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
)

// AddToScheme adds every API group version of the project to s:
// work.karmada.io/v1alpha1, work.karmada.io/v1alpha2, policy.karmada.io/v1alpha1,
// cluster.karmada.io/v1alpha1, config.karmada.io/v1alpha1 and the project's own
// rollouts.binding-controller.io/v1alpha1.
func AddToScheme(s *runtime.Scheme) error {
	for _, add := range []func(*runtime.Scheme) error{
		workv1alpha1.AddToScheme,
		workv1alpha2.AddToScheme,
		policyv1alpha1.AddToScheme,
		clusterv1alpha1.AddToScheme,
		configv1alpha1.AddToScheme,
		rolloutsv1alpha1.AddToScheme,
	} {
		if err := add(s); err != nil {
			return err
		}
	}
	return nil
}
