// SPDX-License-Identifier: Apache-2.0

package render

import (
	"fmt"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// The rules below are Karmada's prune.RemoveIrrelevantFields(obj, prune.RemoveJobTTLSeconds)
// (pkg/resourceinterpreter/default/native/prune/prune.go), which Karmada's controller and
// its Work webhook both run on every manifest. Where Karmada's rule has a quirk, the quirk
// is kept: a Work must come out the same, field for field.

// metadataAssignedByServer lists the metadata the Karmada control plane assigned to the
// template; a member cluster assigns its own, so none of it travels in a Work.
var metadataAssignedByServer = []string{
	"creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation",
	"managedFields", "resourceVersion", "selfLink", "uid", "ownerReferences", "finalizers",
}

// The Job controller of the cluster that created a Job labels its selector with the Job's
// UID and its pod template with the UID and name; carried over they would select the wrong
// pods in a member cluster. Karmada deletes exactly these keys and keeps the maps, emptied
// or not (removeGenerateSelectorOfJob).
var (
	jobSelectorControllerLabels = []string{"controller-uid", "batch.kubernetes.io/controller-uid"}
	jobTemplateControllerLabels = []string{
		"controller-uid", "job-name", "batch.kubernetes.io/controller-uid", "batch.kubernetes.io/job-name",
	}
)

// prune removes from obj everything a member cluster must assign for itself. An error
// is one Karmada fails the Work with (it then writes none).
func prune(obj *unstructured.Unstructured) error {
	for _, field := range metadataAssignedByServer {
		unstructured.RemoveNestedField(obj.Object, "metadata", field)
	}
	unstructured.RemoveNestedField(obj.Object, "status")

	// Karmada picks the rule by kind alone, whatever the group: a Volcano Job
	// (batch.volcano.sh) is pruned as a Job, and so on.
	switch obj.GetKind() {
	case "Deployment":
		// The deployment controller's bookkeeping of the source cluster's rollouts.
		removeAnnotation(obj, "deployment.kubernetes.io/revision")
		removeAnnotation(obj, "deployment.kubernetes.io/revision-history")
	case "Job":
		return pruneJob(obj)
	case "Secret":
		pruneSecret(obj)
	case "ServiceAccount":
		return pruneServiceAccount(obj)
	case "Service":
		pruneService(obj)
	case "PersistentVolumeClaim":
		// The scheduler's choice of node in the source cluster.
		const selectedNode = "volume.kubernetes.io/selected-node"
		if node, found, _ := unstructured.NestedString(obj.Object, "metadata", "annotations", selectedNode); found && node != "" {
			removeAnnotation(obj, selectedNode)
		}
	}
	return nil
}

func pruneJob(obj *unstructured.Unstructured) error {
	// Karmada reads manualSelector from the manifest decoded as a batch/v1 Job, so a Job
	// of another group that does not decode as one fails.
	job := &batchv1.Job{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, job); err != nil {
		return err
	}
	if !ptr.Deref(job.Spec.ManualSelector, false) {
		if err := deleteKeys(obj, []string{"spec", "selector", "matchLabels"}, jobSelectorControllerLabels); err != nil {
			return err
		}
		if err := deleteKeys(obj, []string{"spec", "template", "metadata", "labels"}, jobTemplateControllerLabels); err != nil {
			return err
		}
	}
	// A TTL would make each member delete its copy, which Karmada would then recreate.
	unstructured.RemoveNestedField(obj.Object, "spec", "ttlSecondsAfterFinished")
	return nil
}

// deleteKeys removes keys from the string map at path, leaving the map in place even when
// it is left empty: Karmada's Works show `{}` there, and so must ours to compare equal.
func deleteKeys(obj *unstructured.Unstructured, path []string, keys []string) error {
	m, found, err := unstructured.NestedStringMap(obj.Object, path...)
	if err != nil || !found {
		return err
	}
	for _, key := range keys {
		delete(m, key)
	}
	return unstructured.SetNestedStringMap(obj.Object, m, path...)
}

// pruneSecret clears a service-account token Secret, whose token the token controller of
// each member cluster mints for itself. Karmada sets data to null rather than removing
// it, so the manifest carries "data":null, with or without data before.
func pruneSecret(obj *unstructured.Unstructured) {
	if t, _, _ := unstructured.NestedString(obj.Object, "type"); t != "kubernetes.io/service-account-token" {
		return
	}
	removeAnnotation(obj, "kubernetes.io/service-account.uid")
	_ = unstructured.SetNestedField(obj.Object, nil, "data")
}

// pruneServiceAccount drops the token Secrets the source cluster generated for the
// account (<name>-token-…) from its secrets. Karmada steps past the entry that follows
// each one it drops, so of two such entries in a row the second stays; the list stays
// too, empty or not.
func pruneServiceAccount(obj *unstructured.Unstructured) error {
	secrets, found, _ := unstructured.NestedSlice(obj.Object, "secrets")
	if !found || len(secrets) == 0 {
		return nil
	}
	prefix := obj.GetName() + "-token-"
	dropped := 0
	for i := 0; i < len(secrets); i++ {
		ref, _ := secrets[i].(map[string]any)
		name, ok := ref["name"].(string)
		if !ok {
			// Karmada's controller panics on such an entry and writes no Work.
			return fmt.Errorf("secrets[%d] has no name", i+dropped)
		}
		if strings.HasPrefix(name, prefix) {
			secrets = append(secrets[:i], secrets[i+1:]...)
			dropped++
		}
	}
	return unstructured.SetNestedSlice(obj.Object, secrets, "secrets")
}

// pruneService drops the cluster IPs the source cluster allocated. A headless Service
// stays headless, and without a clusterIP (an override may remove it) Karmada leaves
// clusterIPs alone too.
func pruneService(obj *unstructured.Unstructured) {
	if ip, found, _ := unstructured.NestedString(obj.Object, "spec", "clusterIP"); !found || ip == "None" {
		return
	}
	unstructured.RemoveNestedField(obj.Object, "spec", "clusterIP")
	unstructured.RemoveNestedField(obj.Object, "spec", "clusterIPs")
}

// removeAnnotation deletes one annotation and, as Karmada does, leaves the map in place.
func removeAnnotation(obj *unstructured.Unstructured, key string) {
	unstructured.RemoveNestedField(obj.Object, "metadata", "annotations", key)
}
