// SPDX-License-Identifier: Apache-2.0

package deploy_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/binding-controller/binding-controller/internal/testenv/envtestutil"
)

// render runs `kubectl kustomize <repo root>/<dir>` and decodes every object it prints.
func render(kubectl, dir string) []*unstructured.Unstructured {
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(kubectl, "kustomize", filepath.Join(envtestutil.RepoRoot(), dir))
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	ExpectWithOffset(1, cmd.Run()).To(Succeed(), "kubectl kustomize %s: %s", dir, stderr.String())

	var objs []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(&stdout, 4096)
	for {
		u := &unstructured.Unstructured{}
		err := dec.Decode(&u.Object)
		if errors.Is(err, io.EOF) {
			break
		}
		ExpectWithOffset(1, err).NotTo(HaveOccurred(), "decoding the output of kubectl kustomize %s", dir)
		if len(u.Object) == 0 {
			continue
		}
		objs = append(objs, u)
	}
	ExpectWithOffset(1, objs).NotTo(BeEmpty(), "kubectl kustomize %s rendered nothing", dir)
	return objs
}

// id names an object as "Kind namespace/name" (or "Kind name" when cluster-scoped).
func id(u *unstructured.Unstructured) string {
	if u.GetNamespace() == "" {
		return u.GetKind() + " " + u.GetName()
	}
	return u.GetKind() + " " + u.GetNamespace() + "/" + u.GetName()
}

func ids(objs []*unstructured.Unstructured) []string {
	out := make([]string, 0, len(objs))
	for _, o := range objs {
		out = append(out, id(o))
	}
	return out
}

// find returns the one rendered object of dir with that kind and name.
func find(dir, kind, name string) *unstructured.Unstructured {
	var found *unstructured.Unstructured
	for _, o := range rendered[dir] {
		if o.GetKind() == kind && o.GetName() == name {
			ExpectWithOffset(1, found).To(BeNil(), "%s renders %s %s twice", dir, kind, name)
			found = o
		}
	}
	ExpectWithOffset(1, found).NotTo(BeNil(), "%s renders no %s %s; it renders %v", dir, kind, name, ids(rendered[dir]))
	return found
}

// typed converts a rendered object into a typed one, failing on a field the type lacks.
func typed[T any](u *unstructured.Unstructured) *T {
	out := new(T)
	ExpectWithOffset(1, runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, out, true)).
		To(Succeed(), "%s does not fit %T", id(u), out)
	return out
}

func deploymentOf(dir string) *appsv1.Deployment {
	return typed[appsv1.Deployment](find(dir, "Deployment", "binding-controller-manager"))
}

// managerContainer returns the Deployment's only container, which must be named manager.
func managerContainer(d *appsv1.Deployment) corev1.Container {
	ExpectWithOffset(1, d.Spec.Template.Spec.Containers).To(HaveLen(1))
	c := d.Spec.Template.Spec.Containers[0]
	ExpectWithOffset(1, c.Name).To(Equal("manager"))
	return c
}

// dryRunCreateAll creates every object with server-side dry run and strict field validation
// (an unknown or duplicated field is an error, not a warning) and checks that nothing was
// persisted. An object for which mayExist is true and that the API server already holds (a CRD
// envtest installed, the namespace the suite created) is dry-run updated instead, which
// validates it the same way.
func dryRunCreateAll(objs []*unstructured.Unstructured, mayExist func(*unstructured.Unstructured) bool) {
	for _, o := range objs {
		obj := o.DeepCopy()
		err := k8s.Create(ctx, obj, client.DryRunAll, client.FieldValidation(metav1.FieldValidationStrict))
		if apierrors.IsAlreadyExists(err) && mayExist(o) {
			live := &unstructured.Unstructured{}
			live.SetGroupVersionKind(o.GroupVersionKind())
			ExpectWithOffset(1, k8s.Get(ctx, client.ObjectKeyFromObject(o), live)).To(Succeed())
			obj = o.DeepCopy()
			obj.SetResourceVersion(live.GetResourceVersion())
			err = k8s.Update(ctx, obj, client.DryRunAll, client.FieldValidation(metav1.FieldValidationStrict))
			ExpectWithOffset(1, err).NotTo(HaveOccurred(), "dry-run update of %s", id(o))
			continue
		}
		ExpectWithOffset(1, err).NotTo(HaveOccurred(), "dry-run create of %s", id(o))
		ExpectWithOffset(1, obj.GetUID()).NotTo(BeEmpty(), "the API server did not answer the dry-run create of %s with the object", id(o))

		// Dry run: the object must not exist afterwards.
		probe := &unstructured.Unstructured{}
		probe.SetGroupVersionKind(o.GroupVersionKind())
		err = k8s.Get(ctx, client.ObjectKeyFromObject(o), probe)
		ExpectWithOffset(1, apierrors.IsNotFound(err)).To(BeTrue(), "%s was persisted by a dry-run create (get: %v)", id(o), err)
	}
}

func nothingExists(*unstructured.Unstructured) bool { return false }

// readYAML decodes a repository file strictly into out.
func readYAML(rel string, out any) {
	data, err := os.ReadFile(filepath.Join(envtestutil.RepoRoot(), rel))
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	ExpectWithOffset(1, yaml.UnmarshalStrict(data, out)).To(Succeed(), rel)
}

// describeRule prints a policy rule compactly for failure messages.
func describeRule(apiGroups, resources, verbs []string) string {
	return fmt.Sprintf("apiGroups=%q resources=%q verbs=%q", apiGroups, resources, verbs)
}
