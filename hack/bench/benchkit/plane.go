// SPDX-License-Identifier: Apache-2.0

// Package benchkit is the shared machinery of hack/bench: a real control plane (envtest's
// kube-apiserver and etcd from bin/k8s, with the project's CRDs and an audit log of the
// benchmarked clients), the controller-manager built from this tree and run as a child
// process, its /metrics and peak RSS, a metadata-only watch that timestamps every Work,
// and the aligned table and JSON every run prints.
package benchkit

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/binding-controller/binding-controller/internal/testenv/envtestutil"
	clusterv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/cluster/v1alpha1"
)

// User names of the audited clients: the controller under test and the plain client of
// the ceiling run. The benchmark's own requests (setup, observation) run as envtest's
// admin and are not audited.
const (
	ControllerUser = "bench-controller"
	CeilingUser    = "bench-ceiling"
)

// auditPolicy logs, at Metadata level, every request of the two benchmarked users and
// nothing else, so the log says what the controller asked the API server for, by verb
// and resource, at the cost of one line per request.
var auditPolicy = fmt.Sprintf(`apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
  users: [%q, %q]
- level: None
`, ControllerUser, CeilingUser)

// Plane is a running control plane.
type Plane struct {
	Env *envtest.Environment
	// Admin is envtest's admin config with client-side throttling off.
	Admin *rest.Config
	// Client is an uncached, unthrottled admin client with the project's scheme.
	Client client.Client
	// Metadata is an unthrottled admin metadata-only client.
	Metadata metadata.Interface
	// AuditLog is the audit log path ("" when auditing is off).
	AuditLog string
	// Dir holds the plane's files (audit policy and log, kubeconfigs).
	Dir string

	started *envtestutil.Env
}

// PlaneOptions configure StartPlane.
type PlaneOptions struct {
	// Dir is a directory the plane may write into; it is created.
	Dir string
	// Audit turns on the audit log of ControllerUser and CeilingUser.
	Audit bool
	// KarmadaWorkWebhook puts karmada-webhook's Work mutation (internal/testenv/workwebhook) in front
	// of the API server, as on a real Karmada control plane.
	KarmadaWorkWebhook bool
	// WorkloadCRDs also installs the test workload CRDs (WorkloadCRDDir), for templates
	// of kinds the resource interpreter revises.
	WorkloadCRDs bool
	// CRDPaths, when set, are installed instead of the project's CRDs (WorkloadCRDs still adds
	// its own): hack/diffkarmada installs Karmada's.
	CRDPaths []string
}

// WorkloadCRDDir holds minimal CRDs of third-party and custom workload kinds.
func WorkloadCRDDir() string {
	return filepath.Join(envtestutil.RepoRoot(), "test", "testdata", "workload-crds")
}

// StartPlane starts kube-apiserver and etcd with the project's CRDs installed.
func StartPlane(opts PlaneOptions) (*Plane, error) {
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, err
	}
	p := &Plane{Dir: opts.Dir}
	configure := func(env *envtest.Environment) error {
		if !opts.Audit {
			return nil
		}
		policy := filepath.Join(opts.Dir, "audit-policy.yaml")
		if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
			return err
		}
		p.AuditLog = filepath.Join(opts.Dir, "audit.log")
		args := env.ControlPlane.GetAPIServer().Configure()
		args.Set("audit-policy-file", policy)
		args.Set("audit-log-path", p.AuditLog)
		args.Set("audit-log-format", "json")
		args.Set("audit-log-mode", "blocking")
		args.Set("audit-log-maxsize", "100000") // MB: never rotate during a run
		return nil
	}
	crds := []string{envtestutil.ProjectCRDDir()}
	if len(opts.CRDPaths) > 0 {
		crds = append([]string(nil), opts.CRDPaths...)
	}
	if opts.WorkloadCRDs {
		crds = append(crds, WorkloadCRDDir())
	}
	started, err := envtestutil.StartWith(envtestutil.Options{
		CRDPaths:           crds,
		KarmadaWorkWebhook: opts.KarmadaWorkWebhook,
		Configure:          configure,
	})
	if err != nil {
		return nil, fmt.Errorf("starting the control plane: %w", err)
	}
	p.started, p.Env = started, started.Environment
	cfg := started.Config
	p.Admin = rest.CopyConfig(cfg)
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
	err := Parallel(ctx, len(members), 16, func(ctx context.Context, i int) error {
		err := p.Client.Create(ctx, &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: members[i]},
			Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.SyncModePush}})
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("creating Clusters: %w", err)
	}
	return p.CreateNamespaces(ctx, ExecutionNamespaces(members))
}

// CreateNamespaces creates the namespaces (existing ones are fine), a few at once.
func (p *Plane) CreateNamespaces(ctx context.Context, names []string) error {
	return Parallel(ctx, len(names), 16, func(ctx context.Context, i int) error {
		err := p.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: names[i]}})
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	})
}

// Substitute replaces {key} placeholders in s.
func Substitute(s string, values map[string]string) string {
	for k, v := range values {
		s = strings.ReplaceAll(s, "{"+k+"}", v)
	}
	return s
}
