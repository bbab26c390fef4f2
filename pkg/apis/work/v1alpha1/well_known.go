// SPDX-License-Identifier: Apache-2.0

package v1alpha1

// Kind and resource (plural) of Work.
const (
	ResourceKindWork   = "Work"
	ResourcePluralWork = "works"
)

// ExecutionNamespacePrefix prefixes a member cluster's name to form the namespace its
// Works live in ("execution namespace").
const ExecutionNamespacePrefix = "karmada-es-"

// ExecutionControllerFinalizer is set on every Work; Karmada's execution side removes it
// once the resources on the member cluster are gone.
const ExecutionControllerFinalizer = "karmada.io/execution-controller"

// Labels and annotations put on the workload inside a Work (and partly on the Work).
const (
	// ManagedByKarmadaLabel marks a resource as managed by Karmada.
	ManagedByKarmadaLabel = "karmada.io/managed"
	// ManagedByKarmadaLabelValue is the value of ManagedByKarmadaLabel.
	ManagedByKarmadaLabelValue = "true"

	// ResourceTemplateUIDAnnotation is the UID of the resource template.
	ResourceTemplateUIDAnnotation = "resourcetemplate.karmada.io/uid"
	// ResourceTemplateGenerationAnnotation is the generation of the resource template
	// (set only when > 0).
	ResourceTemplateGenerationAnnotation = "resourcetemplate.karmada.io/generation"
	// ManagedAnnotationsAnnotation is the sorted, comma-joined keys of all annotations
	// of the manifest (itself and ManagedLabelsAnnotation included).
	ManagedAnnotationsAnnotation = "resourcetemplate.karmada.io/managed-annotations"
	// ManagedLabelsAnnotation is the sorted, comma-joined keys of all labels of the manifest.
	ManagedLabelsAnnotation = "resourcetemplate.karmada.io/managed-labels"

	// WorkNameAnnotation is the name of the Work carrying the manifest.
	WorkNameAnnotation = "work.karmada.io/name"
	// WorkNamespaceAnnotation is the namespace of the Work carrying the manifest.
	WorkNamespaceAnnotation = "work.karmada.io/namespace"

	// ConflictResolutionAnnotation tells the execution side how to handle a resource
	// that already exists in the member cluster: ConflictResolutionOverwrite or
	// ConflictResolutionAbort.
	ConflictResolutionAnnotation = "work.karmada.io/conflict-resolution"
	// ConflictResolutionOverwrite overwrites the existing resource.
	ConflictResolutionOverwrite = "overwrite"
	// ConflictResolutionAbort leaves the existing resource alone and fails the apply.
	ConflictResolutionAbort = "abort"
)

// PropagationInstructionLabel on a Work set to PropagationInstructionSuppressed says its
// manifests are not to be propagated: Karmada's Work webhook then leaves their labels and
// annotations alone.
const (
	PropagationInstructionLabel      = "propagation.karmada.io/instruction"
	PropagationInstructionSuppressed = "suppressed"
)

// Condition types of a Work, set by Karmada's execution and status controllers.
const (
	WorkApplied     = "Applied"
	WorkProgressing = "Progressing"
	WorkAvailable   = "Available"
	WorkDegraded    = "Degraded"
)
