// SPDX-License-Identifier: Apache-2.0

// Package templaterevision keeps the revisions of a binding's resource template as apps/v1
// ControllerRevisions owned by the binding, as StatefulSets and DaemonSets keep theirs: a
// staged rollout renders the Works of the clusters it has not reached yet from the
// revision they run, and a rollback renders them from the one before.
//
// A revision is the template without its metadata and status: a change of the spec (or
// of a kind's other content, such as a ConfigMap's data) makes a new revision, a change
// of labels, annotations or status does not. A revision's template is rebuilt on the
// current template's metadata with the revision's own generation (Template): the Works
// rendered from it carry the resourcetemplate.karmada.io/generation of that revision, as
// they did when it was current, and the member object's reflected status can be held
// against it.
package templaterevision

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// BindingUIDLabel marks the revisions of one binding, by its UID: a binding's name may be
// longer than a label value can be, and a recreated binding is another binding.
const BindingUIDLabel = "rollouts.binding-controller.io/binding-uid"

// TemplateGenerationAnnotation records, on a revision, the template's metadata.generation
// when its content was last current.
const TemplateGenerationAnnotation = "rollouts.binding-controller.io/template-generation"

// hashLength is how many hex digits of the content's SHA-256 name a revision: 40 bits,
// ample for the few revisions a binding keeps.
const hashLength = 10

// Content is what a revision of template holds: every top-level field but apiVersion,
// kind, metadata and status.
func Content(template *unstructured.Unstructured) map[string]any {
	content := map[string]any{}
	for k, v := range template.Object {
		switch k {
		case "apiVersion", "kind", "metadata", "status":
			continue
		}
		content[k] = v
	}
	return content
}

// Hash names a content: the first hex digits of the SHA-256 of its JSON (whose object
// keys encoding/json sorts, so equal contents hash equal).
func Hash(content map[string]any) (string, error) {
	raw, err := json.Marshal(content)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])[:hashLength], nil
}

// Name is the name of the binding's revision of hash: <binding>-<hash>, the binding's
// name cut so that the whole stays a valid object name.
func Name(binding, hash string) string {
	const maxName = 253
	if room := maxName - len(hash) - 1; len(binding) > room {
		binding = binding[:room]
	}
	return binding + "-" + hash
}

// Store reads and writes the revisions.
type Store struct {
	Client client.Client
	// Reader lists the revisions; nil lists them through Client. The controller lists
	// them from the API server: only bindings under a rollout have any, and caching every
	// ControllerRevision of the cluster (StatefulSets' and DaemonSets' too) for them would
	// cost every installation memory.
	Reader client.Reader
}

func (s Store) reader() client.Reader {
	if s.Reader == nil {
		return s.Client
	}
	return s.Reader
}

// List returns owner's revisions in namespace, oldest (lowest revision number) first.
func (s Store) List(ctx context.Context, owner client.Object, namespace string) ([]appsv1.ControllerRevision, error) {
	list := &appsv1.ControllerRevisionList{}
	if err := s.reader().List(ctx, list, client.InNamespace(namespace),
		client.MatchingLabels{BindingUIDLabel: string(owner.GetUID())}); err != nil {
		return nil, fmt.Errorf("listing the template revisions of %s: %w", owner.GetName(), err)
	}
	revisions := list.Items
	slices.SortFunc(revisions, func(a, b appsv1.ControllerRevision) int { return cmp.Compare(a.Revision, b.Revision) })
	return revisions, nil
}

// NameOf is the name the revision of template's current content has, or will have.
func NameOf(owner client.Object, template *unstructured.Unstructured) (string, error) {
	hash, err := Hash(Content(template))
	if err != nil {
		return "", fmt.Errorf("hashing the template of %s: %w", owner.GetName(), err)
	}
	return Name(owner.GetName(), hash), nil
}

// Ensure returns the revision of template's current content among revisions (owner's,
// as List gives them), creating it, numbered above every other, when there is none; and
// the revisions as they are now. A content that comes back (a change reverted) gets its
// old revision renumbered as the newest, as a Deployment's rollback does, so the newest
// number is always the template as it is.
func (s Store) Ensure(ctx context.Context, owner client.Object, ownerGVK schema.GroupVersionKind, namespace string,
	template *unstructured.Unstructured, revisions []appsv1.ControllerRevision) (*appsv1.ControllerRevision, []appsv1.ControllerRevision, error) {
	content := Content(template)
	name, err := NameOf(owner, template)
	if err != nil {
		return nil, nil, err
	}
	revisions = slices.Clone(revisions)
	next := int64(1)
	if n := len(revisions); n > 0 {
		next = revisions[n-1].Revision + 1
	}
	generation := strconv.FormatInt(template.GetGeneration(), 10)
	for i := range revisions {
		rev := &revisions[i]
		if rev.Name != name {
			continue
		}
		if i == len(revisions)-1 {
			return rev, revisions, nil
		}
		base := rev.DeepCopy()
		rev.Revision = next
		metav1.SetMetaDataAnnotation(&rev.ObjectMeta, TemplateGenerationAnnotation, generation)
		if err := s.Client.Patch(ctx, rev, client.MergeFrom(base)); err != nil {
			return nil, nil, fmt.Errorf("renumbering template revision %s/%s: %w", namespace, name, err)
		}
		renumbered := *rev
		revisions = append(slices.Delete(revisions, i, i+1), renumbered)
		return &revisions[len(revisions)-1], revisions, nil
	}
	raw, err := json.Marshal(content)
	if err != nil {
		return nil, nil, err
	}
	rev := &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: namespace,
			Labels:          map[string]string{BindingUIDLabel: string(owner.GetUID())},
			Annotations:     map[string]string{TemplateGenerationAnnotation: generation},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(owner, ownerGVK)},
		},
		Data:     runtime.RawExtension{Raw: raw},
		Revision: next,
	}
	if err := s.Client.Create(ctx, rev); err != nil {
		if !apierrors.IsAlreadyExists(err) {
			return nil, nil, fmt.Errorf("creating template revision %s/%s: %w", namespace, name, err)
		}
		// Another sync of the same binding got there first: its revision is this one.
		if err := s.reader().Get(ctx, client.ObjectKeyFromObject(rev), rev); err != nil {
			return nil, nil, fmt.Errorf("reading template revision %s/%s: %w", namespace, name, err)
		}
		// A revision of that name that is not this binding's (one of a binding of the same
		// name deleted before, not yet collected) must never be rendered as this one's.
		if rev.Labels[BindingUIDLabel] != string(owner.GetUID()) {
			return nil, nil, fmt.Errorf("template revision %s/%s belongs to another binding (UID %q)", namespace, name, rev.Labels[BindingUIDLabel])
		}
	}
	revisions = append(revisions, *rev)
	return &revisions[len(revisions)-1], revisions, nil
}

// Template rebuilds the template of rev on current's apiVersion, kind and metadata, with
// the generation the template had when rev was current.
func Template(rev *appsv1.ControllerRevision, current *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	content := map[string]any{}
	// apimachinery's decoder, as for any unstructured object: whole numbers come back as
	// int64 (encoding/json would give float64, which the replica setters refuse).
	if err := utiljson.Unmarshal(rev.Data.Raw, &content); err != nil {
		return nil, fmt.Errorf("decoding template revision %s/%s: %w", rev.Namespace, rev.Name, err)
	}
	out := &unstructured.Unstructured{Object: content}
	for _, k := range []string{"apiVersion", "kind", "metadata"} {
		if v, ok := current.Object[k]; ok {
			out.Object[k] = runtime.DeepCopyJSONValue(v)
		}
	}
	if g, err := strconv.ParseInt(rev.Annotations[TemplateGenerationAnnotation], 10, 64); err == nil {
		out.SetGeneration(g)
	}
	return out, nil
}

// Prune deletes the oldest of revisions (owner's, oldest first, as Ensure returns them)
// until at most limit are left besides the newest, never one named in keep (the
// revisions a rollout still renders).
func (s Store) Prune(ctx context.Context, revisions []appsv1.ControllerRevision, limit int, keep ...string) error {
	if len(revisions) == 0 {
		return nil
	}
	history := revisions[:len(revisions)-1]
	excess := len(history) - limit
	for i := 0; i < len(history) && excess > 0; i++ {
		if slices.Contains(keep, history[i].Name) {
			continue
		}
		if err := s.Client.Delete(ctx, &history[i]); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting template revision %s/%s: %w", history[i].Namespace, history[i].Name, err)
		}
		excess--
	}
	return nil
}

// DeleteAll deletes every revision of owner: its template no longer rolls out.
func (s Store) DeleteAll(ctx context.Context, owner client.Object, namespace string) error {
	revisions, err := s.List(ctx, owner, namespace)
	if err != nil {
		return err
	}
	for i := range revisions {
		if err := s.Client.Delete(ctx, &revisions[i]); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting template revision %s/%s: %w", namespace, revisions[i].Name, err)
		}
	}
	return nil
}
