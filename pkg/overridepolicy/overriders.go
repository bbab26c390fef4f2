// SPDX-License-Identifier: Apache-2.0

package overridepolicy

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"

	policyv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/policy/v1alpha1"
)

// subError locates an error inside an overrider, e.g. ".json[1]" of a fieldOverrider.
type subError struct {
	where string
	err   error
}

func (e *subError) Error() string { return e.err.Error() }
func (e *subError) Unwrap() error { return e.err }

// jsonPatchOp is one RFC 6902 operation. Value is always written, null when unset, as
// Karmada does.
type jsonPatchOp struct {
	Op    policyv1alpha1.OverriderOperator `json:"op"`
	Path  string                           `json:"path"`
	Value apiextensionsv1.JSON             `json:"value"`
}

// applyJSONPatchOp applies one operation to the JSON document doc with the RFC 6902
// semantics of github.com/evanphx/json-patch/v5 (the library Karmada uses): add creates
// or sets a member (or inserts into an array, "-" appends) but its parent must exist;
// remove and replace need the target to exist.
func applyJSONPatchOp(doc []byte, op jsonPatchOp) ([]byte, error) {
	switch op.Op {
	case policyv1alpha1.OverriderOpAdd, policyv1alpha1.OverriderOpRemove, policyv1alpha1.OverriderOpReplace:
	default:
		return nil, fmt.Errorf("unsupported operator %q", op.Op)
	}
	raw, err := json.Marshal([]jsonPatchOp{op})
	if err != nil {
		return nil, err
	}
	patch, err := jsonpatch.DecodePatch(raw)
	if err != nil {
		return nil, err
	}
	out, err := patch.Apply(doc)
	if err != nil {
		if strings.Contains(err.Error(), string(op.Op)) && strings.Contains(err.Error(), op.Path) {
			return nil, err // the library's message already names the operation and path
		}
		return nil, fmt.Errorf("%s %q: %w", op.Op, op.Path, err)
	}
	return out, nil
}

// applyPlaintext applies the plaintext overriders, in order, as JSON patch operations on
// the whole object.
func applyPlaintext(obj *unstructured.Unstructured, ops []policyv1alpha1.PlaintextOverrider) error {
	if len(ops) == 0 {
		return nil
	}
	doc, err := json.Marshal(obj.Object)
	if err != nil {
		return err
	}
	for i := range ops {
		doc, err = applyJSONPatchOp(doc, jsonPatchOp{Op: ops[i].Operator, Path: ops[i].Path, Value: ops[i].Value})
		if err != nil {
			return &subError{where: fmt.Sprintf("[%d]", i), err: err}
		}
	}
	var out map[string]any
	if err := utiljson.Unmarshal(doc, &out); err != nil {
		return fmt.Errorf("the patched object is not a JSON object: %w", err)
	}
	obj.Object = out
	return nil
}

// applyCommandArgsOverrider changes field ("command" or "args") of the containers named
// o.ContainerName in the pod spec of a Pod, ReplicaSet, Deployment, DaemonSet,
// StatefulSet or Job: add appends the values, remove drops every occurrence of each
// value. As in Karmada, a container without the field gets it, even when that leaves it
// an empty list.
func applyCommandArgsOverrider(obj *unstructured.Unstructured, field string, o *policyv1alpha1.CommandArgsOverrider) error {
	if o.Operator != policyv1alpha1.OverriderOpAdd && o.Operator != policyv1alpha1.OverriderOpRemove {
		return fmt.Errorf("unsupported operator %q", o.Operator)
	}
	containers, _, err := containersOf(obj)
	if err != nil {
		return err
	}
	for _, c := range containers {
		container, ok := c.(map[string]any)
		if !ok || container["name"] != o.ContainerName {
			continue
		}
		var current []string
		if v := container[field]; v != nil {
			list, ok := v.([]any)
			if !ok {
				return fmt.Errorf("%s of container %q is not a list", field, o.ContainerName)
			}
			for _, item := range list {
				s, ok := item.(string)
				if !ok {
					return fmt.Errorf("%s of container %q holds a non-string item", field, o.ContainerName)
				}
				current = append(current, s)
			}
		}
		result := make([]any, 0, len(current)+len(o.Value))
		for _, s := range current {
			if o.Operator == policyv1alpha1.OverriderOpAdd || !slices.Contains(o.Value, s) {
				result = append(result, s)
			}
		}
		if o.Operator == policyv1alpha1.OverriderOpAdd {
			for _, s := range o.Value {
				result = append(result, s)
			}
		}
		container[field] = result
	}
	return nil
}

// applyLabelAnnotationOverrider changes metadata.<field> ("labels" or "annotations"):
// add sets every key of the value, remove deletes those keys that exist (their values
// do not matter), replace sets those keys that exist.
func applyLabelAnnotationOverrider(obj *unstructured.Unstructured, field string, o *policyv1alpha1.LabelAnnotationOverrider) error {
	switch o.Operator {
	case policyv1alpha1.OverriderOpAdd, policyv1alpha1.OverriderOpRemove, policyv1alpha1.OverriderOpReplace:
	default:
		return fmt.Errorf("unsupported operator %q", o.Operator)
	}
	v, _, err := unstructured.NestedFieldNoCopy(obj.Object, "metadata", field)
	if err != nil {
		return fmt.Errorf("reading metadata.%s: %w", field, err)
	}
	current, ok := v.(map[string]any)
	if v != nil && !ok {
		return fmt.Errorf("metadata.%s is not a map", field)
	}
	if current == nil {
		if o.Operator != policyv1alpha1.OverriderOpAdd || len(o.Value) == 0 {
			return nil
		}
		current = map[string]any{}
		// SetNestedField stores a deep copy: store the map first, then fill the copy.
		if err := unstructured.SetNestedField(obj.Object, current, "metadata", field); err != nil {
			return fmt.Errorf("setting metadata.%s: %w", field, err)
		}
		v, _, _ = unstructured.NestedFieldNoCopy(obj.Object, "metadata", field)
		current = v.(map[string]any)
	}
	for key, value := range o.Value {
		_, exists := current[key]
		switch o.Operator {
		case policyv1alpha1.OverriderOpAdd:
			current[key] = value
		case policyv1alpha1.OverriderOpReplace:
			if exists {
				current[key] = value
			}
		case policyv1alpha1.OverriderOpRemove:
			delete(current, key)
		}
	}
	return nil
}

// applyFieldOverrider patches the JSON or YAML document held, as a string, by the field
// at o.FieldPath. When both yaml and json operations are given only the yaml ones are
// applied (Karmada's admission forbids giving both); with neither the field is left as
// it is. A YAML document is re-encoded the way sigs.k8s.io/yaml writes it (keys sorted,
// comments dropped), a JSON document compactly, as Karmada does.
func applyFieldOverrider(obj *unstructured.Unstructured, o *policyv1alpha1.FieldOverrider) error {
	v, found, err := pointerGet(obj.Object, o.FieldPath)
	if err != nil {
		return err
	}
	if !found {
		return fmt.Errorf("field %q not found", o.FieldPath)
	}
	text, ok := v.(string)
	if !ok {
		return fmt.Errorf("field %q is not a string", o.FieldPath)
	}
	var out []byte
	switch {
	case len(o.YAML) > 0:
		doc, err := yaml.YAMLToJSON([]byte(text))
		if err != nil {
			return fmt.Errorf("field %q does not hold a valid YAML document: %w", o.FieldPath, err)
		}
		for i := range o.YAML {
			doc, err = applyJSONPatchOp(doc, jsonPatchOp{Op: o.YAML[i].Operator, Path: o.YAML[i].SubPath, Value: o.YAML[i].Value})
			if err != nil {
				return &subError{where: fmt.Sprintf(".yaml[%d]", i), err: fmt.Errorf("field %q: %w", o.FieldPath, err)}
			}
		}
		if out, err = yaml.JSONToYAML(doc); err != nil {
			return fmt.Errorf("field %q: encoding YAML: %w", o.FieldPath, err)
		}
	case len(o.JSON) > 0:
		doc := []byte(text)
		if !json.Valid(doc) {
			return fmt.Errorf("field %q does not hold a valid JSON document", o.FieldPath)
		}
		for i := range o.JSON {
			doc, err = applyJSONPatchOp(doc, jsonPatchOp{Op: o.JSON[i].Operator, Path: o.JSON[i].SubPath, Value: o.JSON[i].Value})
			if err != nil {
				return &subError{where: fmt.Sprintf(".json[%d]", i), err: fmt.Errorf("field %q: %w", o.FieldPath, err)}
			}
		}
		out = doc
	default:
		return nil
	}
	return pointerReplace(obj.Object, o.FieldPath, string(out))
}
