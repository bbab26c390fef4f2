// SPDX-License-Identifier: Apache-2.0

package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

// GroupName is the API group of this package.
const GroupName = "rollouts.binding-controller.io"

var (
	// GroupVersion is the group version used to register these objects.
	GroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1alpha1"}

	// SchemeBuilder registers the Go types of this group version with a scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the types of this group version to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func init() {
	SchemeBuilder.Register(
		&RolloutPolicy{}, &RolloutPolicyList{},
		&ClusterRolloutPolicy{}, &ClusterRolloutPolicyList{},
		&BindingRollout{}, &BindingRolloutList{},
		&ClusterBindingRollout{}, &ClusterBindingRolloutList{},
	)
}
