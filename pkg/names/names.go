// SPDX-License-Identifier: Apache-2.0

// Package names derives the names Karmada gives to execution namespaces and Works,
// so that Works written here are found by Karmada's execution side and karmadactl.
package names

import (
	"fmt"
	"hash/fnv"
	"strings"

	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/validation"

	workv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha1"
)

// ExecutionNamespace returns the namespace that holds the Works of cluster.
func ExecutionNamespace(cluster string) string {
	return workv1alpha1.ExecutionNamespacePrefix + cluster
}

// ClusterOfExecutionNamespace returns the cluster whose Works live in namespace,
// and false when namespace is not an execution namespace.
func ClusterOfExecutionNamespace(namespace string) (string, bool) {
	cluster, ok := strings.CutPrefix(namespace, workv1alpha1.ExecutionNamespacePrefix)
	return cluster, ok && cluster != ""
}

// ValidateClusterName reports why cluster cannot name an execution namespace, or nil.
// A bad name would otherwise surface as an opaque API error on every write.
func ValidateClusterName(cluster string) error {
	if cluster == "" {
		return fmt.Errorf("cluster name is empty")
	}
	if errs := validation.IsDNS1123Label(ExecutionNamespace(cluster)); len(errs) > 0 {
		return fmt.Errorf("cluster name %q does not form a valid execution namespace %q: %s",
			cluster, ExecutionNamespace(cluster), strings.Join(errs, "; "))
	}
	return nil
}

// WorkName returns the name of the Work that carries the template kind namespace/name.
// It matches Karmada's: the lower-cased name (':' becomes '.') followed by the
// safe-encoded decimal FNV-32a hash of "namespace-name-kind" (cluster-scoped:
// "name-kind"), lower-cased. Deployment default/nginx gives nginx-687f7fb96f.
func WorkName(kind, namespace, name string) string {
	name = strings.ReplaceAll(name, ":", ".")
	key := name + "-" + kind
	if namespace != "" {
		key = namespace + "-" + key
	}
	hash := fnv.New32a()
	// fnv's Write never fails.
	_, _ = hash.Write([]byte(strings.ToLower(key)))
	return strings.ToLower(name) + "-" + rand.SafeEncodeString(fmt.Sprint(hash.Sum32()))
}
