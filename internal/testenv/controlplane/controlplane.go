// SPDX-License-Identifier: Apache-2.0

// Package controlplane is a bare kube-apiserver and etcd (envtest's, from bin/k8s) for
// programs that run controllers as their own processes against it, the benchmark and
// hack/diffkarmada: users with kubeconfigs of their own, an audit log of chosen users,
// member clusters joined. Unlike localplane it starts no controller and invents no
// cluster topology: what a run measures or compares is only what it created.
package controlplane

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/binding-controller/binding-controller/internal/testenv/envtestutil"
	clusterv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/cluster/v1alpha1"
	"github.com/binding-controller/binding-controller/pkg/names"
)

// Plane is a running control plane.
type Plane struct {
	Env *envtest.Environment
	// Admin is envtest's admin config with client-side throttling off.
	Admin *rest.Config
	// Client is an uncached, unthrottled admin client with the project's scheme.
	Client client.Client
	// Metadata is an unthrottled admin metadata-only client.
	Metadata metadata.Interface
	// AuditLog is the audit log path ("" when no user is audited).
	AuditLog string
	// Dir holds the plane's files (audit policy and log, kubeconfigs).
	Dir string

	started *envtestutil.Env
}

// Options configure Start.
type Options struct {
	// Dir is a directory the plane may write into; it is created.
	Dir string
	// AuditUsers are the users whose requests the audit log records, at Metadata level
	// and nothing else: one line per request says what a client asked for, by verb and
	// resource, and the admin's own setup and observation stay out of it.
	AuditUsers []string
	// KarmadaWorkWebhook puts karmada-webhook's Work mutation (internal/testenv/workwebhook)
	// in front of the API server, as on a real Karmada control plane.
	KarmadaWorkWebhook bool
	// WorkloadCRDs also installs envtestutil.WorkloadCRDDir, for templates of kinds the
	// resource interpreter revises.
	WorkloadCRDs bool
	// CRDPaths, when set, are installed instead of the project's CRDs (WorkloadCRDs still
	// adds its own): hack/diffkarmada installs Karmada's.
	CRDPaths []string
}

// Start starts kube-apiserver and etcd with the CRDs installed.
func Start(opts Options) (*Plane, error) {
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, err
	}
	p := &Plane{Dir: opts.Dir}
	crds := []string{envtestutil.ProjectCRDDir()}
	if len(opts.CRDPaths) > 0 {
		crds = append([]string(nil), opts.CRDPaths...)
	}
	if opts.WorkloadCRDs {
		crds = append(crds, envtestutil.WorkloadCRDDir())
	}
	started, err := envtestutil.StartWith(envtestutil.Options{
		CRDPaths:           crds,
		KarmadaWorkWebhook: opts.KarmadaWorkWebhook,
		Configure:          func(env *envtest.Environment) error { return p.configureAudit(env, opts.AuditUsers) },
	})
	if err != nil {
		return nil, fmt.Errorf("starting the control plane: %w", err)
	}
	p.started, p.Env = started, started.Environment
	p.Admin = rest.CopyConfig(started.Config)
	p.Admin.QPS, p.Admin.Burst = -1, 0
	if p.Client, err = client.New(p.Admin, client.Options{Scheme: envtestutil.Scheme()}); err != nil {
		_ = p.Stop()
		return nil, err
	}
	if p.Metadata, err = metadata.NewForConfig(p.Admin); err != nil {
		_ = p.Stop()
		return nil, err
	}
	return p, nil
}

// configureAudit turns on the audit log of users, when there are any.
func (p *Plane) configureAudit(env *envtest.Environment, users []string) error {
	if len(users) == 0 {
		return nil
	}
	quoted := make([]string, len(users))
	for i, u := range users {
		quoted[i] = strconv.Quote(u)
	}
	policy := filepath.Join(p.Dir, "audit-policy.yaml")
	text := fmt.Sprintf("apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [\"RequestReceived\"]\nrules:\n"+
		"- level: Metadata\n  users: [%s]\n- level: None\n", strings.Join(quoted, ", "))
	if err := os.WriteFile(policy, []byte(text), 0o600); err != nil {
		return err
	}
	p.AuditLog = filepath.Join(p.Dir, "audit.log")
	args := env.ControlPlane.GetAPIServer().Configure()
	args.Set("audit-policy-file", policy)
	args.Set("audit-log-path", p.AuditLog)
	args.Set("audit-log-format", "json")
	args.Set("audit-log-mode", "blocking")
	args.Set("audit-log-maxsize", "100000") // MB: never rotate during a run
	return nil
}

// AddUser provisions a system:masters user and returns its rest config (qps < 0: no
// client-side throttling) and the path of a kubeconfig written for it.
func (p *Plane) AddUser(name string, qps float32, burst int) (*rest.Config, string, error) {
	u, err := p.Env.AddUser(envtest.User{Name: name, Groups: []string{"system:masters"}}, &rest.Config{QPS: qps, Burst: burst})
	if err != nil {
		return nil, "", fmt.Errorf("adding user %s: %w", name, err)
	}
	kc, err := u.KubeConfig()
	if err != nil {
		return nil, "", err
	}
	path := filepath.Join(p.Dir, name+".kubeconfig")
	if err := os.WriteFile(path, kc, 0o600); err != nil {
		return nil, "", err
	}
	return u.Config(), path, nil
}

// Stop stops kube-apiserver and etcd and removes their data.
func (p *Plane) Stop() error {
	if p == nil || p.started == nil {
		return nil
	}
	return p.started.Stop()
}

// JoinMembers creates each member's Cluster object and execution namespace, as joining it
// to Karmada does (existing ones are fine): the controller, like Karmada's, writes no Work
// for a cluster that has no Cluster object.
func (p *Plane) JoinMembers(ctx context.Context, members []string) error {
	err := createAll(ctx, len(members), func(ctx context.Context, i int) error {
		return p.Client.Create(ctx, &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: members[i]},
			Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.SyncModePush}})
	})
	if err != nil {
		return fmt.Errorf("creating Clusters: %w", err)
	}
	return p.CreateNamespaces(ctx, ExecutionNamespaces(members))
}

// CreateNamespaces creates the namespaces (existing ones are fine), a few at once.
func (p *Plane) CreateNamespaces(ctx context.Context, namespaces []string) error {
	return createAll(ctx, len(namespaces), func(ctx context.Context, i int) error {
		return p.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespaces[i]}})
	})
}

// createAll runs create for 0..n-1, 16 at once; an object that already exists is fine.
func createAll(ctx context.Context, n int, create func(ctx context.Context, i int) error) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(16)
	for i := range n {
		g.Go(func() error {
			if err := create(ctx, i); err != nil && !apierrors.IsAlreadyExists(err) {
				return err
			}
			return nil
		})
	}
	return g.Wait()
}

// ExecutionNamespaces returns the execution namespaces of clusters.
func ExecutionNamespaces(clusters []string) []string {
	out := make([]string, len(clusters))
	for i, c := range clusters {
		out[i] = names.ExecutionNamespace(c)
	}
	return out
}
