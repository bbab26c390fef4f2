// SPDX-License-Identifier: Apache-2.0

package ledgercheckpoint

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/binding-controller/binding-controller/pkg/workapply"
)

// Label marks the ConfigMaps of a checkpoint; its value is the Store's Name.
const Label = "binding-controller.io/work-ledger"

// dataKey is the ConfigMap binaryData key that holds a shard.
const dataKey = "vouches"

// Store keeps a checkpoint in ConfigMaps named <Name>-<i> in Namespace. It is not safe
// for concurrent use; one process has one writer, the leader's.
type Store struct {
	// Reader lists the ConfigMaps from the API server itself: a cached client would
	// watch every ConfigMap of the cluster for one read at start.
	Reader client.Reader
	// Writer creates, updates and deletes them.
	Writer    client.Writer
	Namespace string
	Name      string

	// held maps each shard this Store read or wrote to a hash of its bytes, so that Save
	// writes only the shards that changed and deletes those no longer needed.
	held map[string]uint64
	// loaded is when Load last read the checkpoint.
	loaded time.Time
}

// LoadedAt is when Load last read the checkpoint; zero before.
func (s *Store) LoadedAt() time.Time { return s.loaded }

// Load reads every shard of the checkpoint and returns the vouches of those that decode.
// No checkpoint yet is no vouch and no error. A shard that does not decode (another
// version's, say) is left out, and named in the error returned with the other vouches.
func (s *Store) Load(ctx context.Context) (map[types.UID]workapply.Vouch, error) {
	list := &corev1.ConfigMapList{}
	if err := s.Reader.List(ctx, list, client.InNamespace(s.Namespace), client.MatchingLabels{Label: s.Name}); err != nil {
		return nil, fmt.Errorf("listing the Work ledger checkpoint in namespace %s: %w", s.Namespace, err)
	}
	s.loaded = time.Now()
	vouches := map[types.UID]workapply.Vouch{}
	var errs []error
	for i := range list.Items {
		cm := &list.Items[i]
		data := cm.BinaryData[dataKey]
		s.hold(cm.Name, data)
		if err := decode(data, vouches); err != nil {
			errs = append(errs, fmt.Errorf("configmap %s/%s: %w", cm.Namespace, cm.Name, err))
		}
	}
	return vouches, errors.Join(errs...)
}

// Save writes vouches over the checkpoint: the shards whose bytes changed, then deletes
// the shards a larger checkpoint needed and this one does not. It returns how many
// ConfigMaps it wrote.
func (s *Store) Save(ctx context.Context, vouches []workapply.Vouch) (int, error) {
	shards := encode(vouches)
	wanted := map[string]bool{}
	written := 0
	for i, data := range shards {
		name := fmt.Sprintf("%s-%d", s.Name, i)
		wanted[name] = true
		if h, ok := s.held[name]; ok && h == hashOf(data) {
			continue
		}
		if err := s.write(ctx, name, data); err != nil {
			return written, err
		}
		s.hold(name, data)
		written++
	}
	for _, name := range sortedKeys(s.held) {
		if wanted[name] {
			continue
		}
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: name}}
		if err := s.Writer.Delete(ctx, cm); err != nil && !apierrors.IsNotFound(err) {
			return written, fmt.Errorf("deleting configmap %s/%s of the Work ledger checkpoint: %w", s.Namespace, name, err)
		}
		delete(s.held, name)
	}
	return written, nil
}

// write replaces the shard without reading it first: an update without a resourceVersion
// is unconditional for ConfigMaps, and the shard is this writer's alone.
func (s *Store) write(ctx context.Context, name string, data []byte) error {
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: s.Namespace, Name: name,
			Labels: map[string]string{Label: s.Name, "app.kubernetes.io/managed-by": "binding-controller"},
		},
		BinaryData: map[string][]byte{dataKey: data},
	}
	err := s.Writer.Update(ctx, cm)
	if apierrors.IsNotFound(err) {
		cm.ResourceVersion = ""
		err = s.Writer.Create(ctx, cm)
	}
	if err != nil {
		return fmt.Errorf("writing configmap %s/%s of the Work ledger checkpoint: %w", s.Namespace, name, err)
	}
	return nil
}

func (s *Store) hold(name string, data []byte) {
	if s.held == nil {
		s.held = map[string]uint64{}
	}
	s.held[name] = hashOf(data)
}

func hashOf(data []byte) uint64 {
	h := fnv.New64a()
	_, _ = h.Write(data)
	return h.Sum64()
}

func sortedKeys(m map[string]uint64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
