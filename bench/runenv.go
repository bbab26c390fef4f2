// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/binding-controller/binding-controller/bench/benchkit"
	"github.com/binding-controller/binding-controller/internal/testenv/controlplane"
	"github.com/binding-controller/binding-controller/internal/testenv/localplane"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
)

// runEnv is one measured load's fresh control plane, made ready for a controller: the
// controller's user, the load's namespaces and templates, and a watch timing every Work.
type runEnv struct {
	plane      *controlplane.Plane
	kubeconfig string
	templates  []*appsv1.Deployment
	refs       []workv1alpha2.ObjectReference
	tracker    *localplane.WorkTracker
	// stop ends the tracker's watch and the control plane.
	stop func()
}

// setUp starts a fresh control plane for load and prepares it. templates creates the
// load's templates into env.templates and env.refs; nil creates load.Bindings of them
// as prepare does.
func (p *propagation) setUp(ctx context.Context, label string, load loadSpec, templates func(context.Context, *runEnv) error) (*runEnv, error) {
	plane, err := p.newPlane(label, load)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	env := &runEnv{plane: plane, stop: func() { p.stopPlane(label, plane, cancel) }}
	fail := func(err error) (*runEnv, error) {
		env.stop()
		return nil, err
	}
	if _, env.kubeconfig, err = plane.AddUser(benchkit.ControllerUser, -1, 0); err != nil {
		return fail(err)
	}
	if templates == nil {
		if env.templates, env.refs, err = p.prepare(ctx, plane, load); err != nil {
			return fail(err)
		}
	} else {
		if err := plane.JoinMembers(ctx, benchkit.Members(load.Clusters)); err != nil {
			return fail(fmt.Errorf("joining members: %w", err))
		}
		if err := plane.CreateNamespaces(ctx, []string{templateNamespace, canaryNamespace}); err != nil {
			return fail(fmt.Errorf("creating namespaces: %w", err))
		}
		if err := templates(ctx, env); err != nil {
			return fail(err)
		}
	}
	if env.tracker, err = localplane.StartWorkTracker(ctx, plane.Metadata); err != nil {
		return fail(err)
	}
	return env, nil
}

// startController starts spec on the plane, its log in logPath.
func (env *runEnv) startController(ctx context.Context, spec benchkit.ControllerSpec, logPath string) (*benchkit.Controller, error) {
	return benchkit.StartController(ctx, spec, env.kubeconfig, logPath)
}
