// SPDX-License-Identifier: Apache-2.0

// Package localplane starts a local Karmada-shaped control plane for trying the
// binding controller by hand ('make run') and for the demo ('make demo'): a real
// kube-apiserver and etcd from bin/k8s (see internal/testenv/envtestutil) with the project's CRDs,
// the namespaces karmada-system and karmada-es-<member>, and one Cluster object per
// member. It also runs the controller-manager binary as a child process (process.go).
//
//	plane, err := localplane.Start(ctx, localplane.Options{KubeconfigPath: "bin/local/kubeconfig"})
//	if err != nil { ... }
//	defer plane.Stop()
package localplane

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/binding-controller/binding-controller/internal/testenv/envtestutil"
	clusterv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/cluster/v1alpha1"
	"github.com/binding-controller/binding-controller/pkg/names"
)

// KarmadaSystemNamespace is where Karmada's own components live (and where the manager
// keeps its leader-election Lease by default).
const KarmadaSystemNamespace = "karmada-system"

// DefaultMembers are the member clusters of the seed case.
var DefaultMembers = []string{"member1", "member2", "member3"}

// Options say what the plane holds.
type Options struct {
	// Members are the member cluster names; empty means DefaultMembers.
	Members []string
	// KubeconfigPath, when set, is where an admin kubeconfig of the plane is written
	// (parent directories are created; an existing file is replaced).
	KubeconfigPath string
	// KarmadaWorkWebhook puts karmada-webhook's Work mutation (internal/testenv/workwebhook) in front
	// of the API server, as on a real Karmada control plane.
	KarmadaWorkWebhook bool
}

// Plane is a running local control plane.
type Plane struct {
	// Env is the envtest environment running kube-apiserver and etcd.
	Env *envtest.Environment
	// Config is an admin rest.Config of the plane.
	Config *rest.Config
	// Client is a live (uncached) client with the project's scheme.
	Client client.Client
	// Members are the member cluster names, in order.
	Members []string
	// KubeconfigPath is the file written, or "" when Options.KubeconfigPath was empty.
	KubeconfigPath string

	started *envtestutil.Env
}

// Start starts kube-apiserver and etcd with the project's CRDs and creates the
// namespaces and Clusters. On error nothing is left running.
func Start(ctx context.Context, opts Options) (*Plane, error) {
	members := opts.Members
	if len(members) == 0 {
		members = DefaultMembers
	}
	for _, m := range members {
		if err := names.ValidateClusterName(m); err != nil {
			return nil, err
		}
	}
	env, err := envtestutil.StartWith(envtestutil.Options{
		CRDPaths: []string{envtestutil.ProjectCRDDir()}, KarmadaWorkWebhook: opts.KarmadaWorkWebhook,
	})
	if err != nil {
		return nil, err
	}
	p := &Plane{Env: env.Environment, Config: env.Config, Members: append([]string(nil), members...), started: env}
	if err := p.populate(ctx, opts.KubeconfigPath); err != nil {
		return nil, errors.Join(err, p.Stop())
	}
	return p, nil
}

func (p *Plane) populate(ctx context.Context, kubeconfigPath string) error {
	c, err := client.New(p.Config, client.Options{Scheme: envtestutil.Scheme()})
	if err != nil {
		return fmt.Errorf("creating a client: %w", err)
	}
	p.Client = c
	namespaces := []string{KarmadaSystemNamespace}
	for _, m := range p.Members {
		namespaces = append(namespaces, names.ExecutionNamespace(m))
	}
	for _, ns := range namespaces {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			return fmt.Errorf("creating namespace %s: %w", ns, err)
		}
	}
	for i, m := range p.Members {
		if err := createCluster(ctx, c, m, i); err != nil {
			return fmt.Errorf("creating Cluster %s: %w", m, err)
		}
	}
	if kubeconfigPath != "" {
		if err := os.MkdirAll(filepath.Dir(kubeconfigPath), 0o755); err != nil {
			return fmt.Errorf("writing the kubeconfig: %w", err)
		}
		if err := os.WriteFile(kubeconfigPath, p.Env.KubeConfig, 0o600); err != nil {
			return fmt.Errorf("writing the kubeconfig: %w", err)
		}
		p.KubeconfigPath = kubeconfigPath
	}
	return nil
}

// locations give the Clusters a plausible provider, region and zone, in turn.
var locations = []struct{ provider, region, zone string }{
	{"aws", "us-east-1", "us-east-1a"},
	{"gcp", "europe-west1", "europe-west1-b"},
	{"azure", "japaneast", "japaneast-1"},
	{"alibabacloud", "cn-hangzhou", "cn-hangzhou-h"},
}

func createCluster(ctx context.Context, c client.Client, name string, i int) error {
	loc := locations[i%len(locations)]
	cluster := &clusterv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{
			Name: name,
			Labels: map[string]string{
				"cluster.karmada.io/provider":   loc.provider,
				"topology.kubernetes.io/region": loc.region,
				"topology.kubernetes.io/zone":   loc.zone,
				"environment":                   "local",
			},
		},
		Spec: clusterv1alpha1.ClusterSpec{
			ID:          string(uuid.NewUUID()),
			SyncMode:    clusterv1alpha1.SyncModePush,
			APIEndpoint: fmt.Sprintf("https://%s.%s.example.com:6443", name, loc.region),
			SecretRef:   &clusterv1alpha1.LocalSecretReference{Namespace: "karmada-cluster", Name: name},
			Provider:    loc.provider,
			Region:      loc.region,
			Zone:        loc.zone,
			Zones:       []string{loc.zone},
		},
	}
	if err := c.Create(ctx, cluster); err != nil {
		return err
	}
	cluster.Status = clusterv1alpha1.ClusterStatus{
		KubernetesVersion: "v1.37.2",
		Conditions: []metav1.Condition{{
			Type:               clusterv1alpha1.ClusterConditionReady,
			Status:             metav1.ConditionTrue,
			Reason:             "ClusterReady",
			Message:            "cluster is healthy and ready to accept workloads",
			LastTransitionTime: metav1.Now(),
		}},
	}
	return c.Status().Update(ctx, cluster)
}

// APIServerURL is the address of the plane's kube-apiserver.
func (p *Plane) APIServerURL() string { return strings.TrimSuffix(p.Config.Host, "/") }

// Stop stops kube-apiserver and etcd and removes their data. The kubeconfig file, if
// one was written (and not overwritten since), is removed too: it names a server that
// is gone.
func (p *Plane) Stop() error {
	if p == nil || p.Env == nil {
		return nil
	}
	err := p.started.Stop()
	if p.KubeconfigPath != "" {
		// Leave the file alone if another plane has written over it since.
		data, readErr := os.ReadFile(p.KubeconfigPath)
		if readErr == nil && bytes.Equal(data, p.Env.KubeConfig) {
			if rmErr := os.Remove(p.KubeconfigPath); rmErr != nil && !errors.Is(rmErr, os.ErrNotExist) {
				err = errors.Join(err, rmErr)
			}
		}
	}
	p.Env = nil
	return err
}
