package render

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// metadataAssignedByServer lists the metadata the Karmada control plane assigned to the
// template; a member cluster assigns its own, so none of it travels in a Work.
var metadataAssignedByServer = []string{
	"creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation",
	"managedFields", "resourceVersion", "selfLink", "uid", "ownerReferences", "finalizers",
}

// The Job controller of the cluster that created a Job labels its selector with the Job's
// UID and its pod template with the UID and name; carried over they would select the wrong
// pods in a member cluster. Karmada deletes exactly these keys and keeps the maps, emptied
// or not (pkg/resourceinterpreter/default/native/prune: removeGenerateSelectorOfJob).
var (
	jobSelectorControllerLabels = []string{"controller-uid", "batch.kubernetes.io/controller-uid"}
	jobTemplateControllerLabels = []string{
		"controller-uid", "job-name", "batch.kubernetes.io/controller-uid", "batch.kubernetes.io/job-name",
	}
)

// prune removes from obj everything a member cluster must assign for itself.
func prune(obj *unstructured.Unstructured) {
	for _, field := range metadataAssignedByServer {
		unstructured.RemoveNestedField(obj.Object, "metadata", field)
	}
	unstructured.RemoveNestedField(obj.Object, "status")

	switch obj.GroupVersionKind().GroupKind().String() {
	case "Deployment.apps":
		removeAnnotations(obj, "deployment.kubernetes.io/revision")
	case "Job.batch":
		pruneJob(obj)
	case "Service":
		pruneService(obj)
	case "Secret":
		if t, _, _ := unstructured.NestedString(obj.Object, "type"); t == "kubernetes.io/service-account-token" {
			// The token controller of the member cluster mints its own token.
			unstructured.RemoveNestedField(obj.Object, "data")
			removeAnnotations(obj, "kubernetes.io/service-account.uid")
		}
	case "PersistentVolumeClaim":
		removeAnnotations(obj, "volume.kubernetes.io/selected-node")
	}
}

func pruneJob(obj *unstructured.Unstructured) {
	// A TTL would make each member delete its copy, which Karmada would then recreate.
	unstructured.RemoveNestedField(obj.Object, "spec", "ttlSecondsAfterFinished")
	if manual, _, _ := unstructured.NestedBool(obj.Object, "spec", "manualSelector"); manual {
		return
	}
	deleteKeys(obj, []string{"spec", "selector", "matchLabels"}, jobSelectorControllerLabels)
	deleteKeys(obj, []string{"spec", "template", "metadata", "labels"}, jobTemplateControllerLabels)
}

// deleteKeys removes keys from the map at path, leaving the map in place even when it is
// left empty: Karmada's Works show `{}` there, and so must ours to compare equal.
func deleteKeys(obj *unstructured.Unstructured, path []string, keys []string) {
	m, found, err := unstructured.NestedMap(obj.Object, path...)
	if err != nil || !found {
		return
	}
	for _, key := range keys {
		delete(m, key)
	}
	_ = unstructured.SetNestedMap(obj.Object, m, path...)
}

func pruneService(obj *unstructured.Unstructured) {
	// A headless Service stays headless; any other cluster IP belongs to the source cluster.
	if ip, _, _ := unstructured.NestedString(obj.Object, "spec", "clusterIP"); ip == "None" {
		return
	}
	unstructured.RemoveNestedField(obj.Object, "spec", "clusterIP")
	unstructured.RemoveNestedField(obj.Object, "spec", "clusterIPs")
}

func removeAnnotations(obj *unstructured.Unstructured, keys ...string) {
	annotations := obj.GetAnnotations()
	if len(annotations) == 0 {
		return
	}
	for _, key := range keys {
		delete(annotations, key)
	}
	if len(annotations) == 0 {
		annotations = nil
	}
	obj.SetAnnotations(annotations)
}
