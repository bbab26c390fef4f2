// SPDX-License-Identifier: Apache-2.0

/*
Copyright 2026 The binding-controller Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package apis_test

import (
	"context"
	"net/http"
	"sync"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/binding-controller/binding-controller/internal/testenv/envtestutil"
	"github.com/binding-controller/binding-controller/pkg/ledgercheckpoint"
	"github.com/binding-controller/binding-controller/pkg/workapply"
)

// methodCounter counts requests by HTTP method.
type methodCounter struct {
	mu   sync.Mutex
	n    map[string]int
	next http.RoundTripper
}

func (m *methodCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	m.mu.Lock()
	m.n[req.Method]++
	m.mu.Unlock()
	return m.next.RoundTrip(req)
}

func (m *methodCounter) take() map[string]int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := m.n
	m.n = map[string]int{}
	return n
}

var _ = Describe("The Work ledger checkpoint on a real API server", Ordered, func() {
	const namespace = "karmada-system"
	var (
		ctx     = context.Background()
		srv     *apiServer
		counted *methodCounter
		store   func() *ledgercheckpoint.Store
	)
	vouches := func(n int) []workapply.Vouch {
		out := make([]workapply.Vouch, n)
		for i := range out {
			out[i] = workapply.Vouch{UID: types.UID(uuid.NewString()), Generation: int64(1 + i%3), Hash: uint64(i) * 0x9e3779b97f4a7c15}
		}
		return out
	}
	shards := func() []string {
		list := &corev1.ConfigMapList{}
		Expect(srv.c.List(ctx, list, client.InNamespace(namespace), client.MatchingLabels{ledgercheckpoint.Label: "binding-controller-manager-work-ledger"})).To(Succeed())
		var names []string
		for _, cm := range list.Items {
			names = append(names, cm.Name)
		}
		return names
	}

	BeforeAll(func() {
		srv = startAPIServer(envtestutil.ProjectCRDDir())
		Expect(srv.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}})).To(Succeed())
		cfg := rest.CopyConfig(srv.cfg)
		counted = &methodCounter{n: map[string]int{}}
		cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { counted.next = rt; return counted })
		c, err := client.New(cfg, client.Options{Scheme: envtestutil.Scheme()})
		Expect(err).NotTo(HaveOccurred())
		// The client's discovery of the API, once, is not the Store's doing.
		Expect(c.List(ctx, &corev1.ConfigMapList{}, client.InNamespace(namespace))).To(Succeed())
		counted.take()
		// Each call is a fresh process's Store: it knows only what it reads.
		store = func() *ledgercheckpoint.Store {
			return &ledgercheckpoint.Store{Reader: c, Writer: c, Namespace: namespace, Name: "binding-controller-manager-work-ledger"}
		}
	})

	It("saves 100,000 Works' vouches in ConfigMaps the API server accepts, and a later process reads them all back with one list", func() {
		in := vouches(100000)
		s := store()
		written, err := s.Save(ctx, in)
		Expect(err).NotTo(HaveOccurred())
		Expect(written).To(Equal(5))
		Expect(shards()).To(ConsistOf(
			"binding-controller-manager-work-ledger-0", "binding-controller-manager-work-ledger-1",
			"binding-controller-manager-work-ledger-2", "binding-controller-manager-work-ledger-3",
			"binding-controller-manager-work-ledger-4"))
		Expect(counted.take()).To(Equal(map[string]int{"PUT": 5, "POST": 5}), "a missing shard: an update answered NotFound, then a create")

		got, err := store().Load(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(HaveLen(len(in)))
		for _, v := range in {
			Expect(got[v.UID]).To(Equal(v))
		}
		Expect(counted.take()).To(Equal(map[string]int{"GET": 1}))
	})

	It("writes only the shards that changed, without reading them first", func() {
		s := store()
		loaded, err := s.Load(ctx)
		Expect(err).NotTo(HaveOccurred())
		in := make([]workapply.Vouch, 0, len(loaded))
		for _, v := range loaded {
			in = append(in, v)
		}
		counted.take()
		written, err := s.Save(ctx, in)
		Expect(err).NotTo(HaveOccurred())
		Expect(written).To(BeZero(), "nothing changed")

		in[0].Generation++
		written, err = s.Save(ctx, in)
		Expect(err).NotTo(HaveOccurred())
		Expect(written).To(Equal(1), "one vouch changed: its shard alone")
		Expect(counted.take()).To(Equal(map[string]int{"PUT": 1}))
		got, err := store().Load(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(got[in[0].UID]).To(Equal(in[0]))
	})

	It("deletes the shards a smaller fleet no longer needs", func() {
		s := store()
		_, err := s.Load(ctx)
		Expect(err).NotTo(HaveOccurred())
		in := vouches(1000)
		_, err = s.Save(ctx, in)
		Expect(err).NotTo(HaveOccurred())
		Expect(shards()).To(ConsistOf("binding-controller-manager-work-ledger-0"))
		got, err := store().Load(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(HaveLen(1000))
	})

	It("reads no checkpoint, and no error, where none was saved", func() {
		s := &ledgercheckpoint.Store{Reader: srv.c, Writer: srv.c, Namespace: namespace, Name: "another-controller-work-ledger"}
		got, err := s.Load(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(BeEmpty())
	})
})
