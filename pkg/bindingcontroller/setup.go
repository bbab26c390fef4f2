// SPDX-License-Identifier: Apache-2.0

package bindingcontroller

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/cluster/v1alpha1"
	configv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/config/v1alpha1"
	policyv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/policy/v1alpha1"
	"github.com/binding-controller/binding-controller/pkg/cacheable"
	"github.com/binding-controller/binding-controller/pkg/render"
	"github.com/binding-controller/binding-controller/pkg/workapply"
)

// Controller names, as --controllers knows them.
const (
	ResourceBindingControllerName        = "resourcebinding"
	ClusterResourceBindingControllerName = "clusterresourcebinding"
)

// Setup registers the Work index and the enabled binding controllers with mgr.
func Setup(ctx context.Context, mgr ctrl.Manager, opts Options) error {
	if err := SetupIndexes(ctx, mgr.GetFieldIndexer()); err != nil {
		return fmt.Errorf("indexing works by binding: %w", err)
	}
	opts = opts.withDefaults()
	apis := ServedAPIs{
		OverridePolicies: served(mgr, policyv1alpha1.GroupVersion.WithKind("OverridePolicy")) &&
			served(mgr, policyv1alpha1.GroupVersion.WithKind("ClusterOverridePolicy")),
		Clusters:       served(mgr, clusterv1alpha1.GroupVersion.WithKind("Cluster")),
		Customizations: served(mgr, configv1alpha1.GroupVersion.WithKind("ResourceInterpreterCustomization")),
		Webhooks:       served(mgr, configv1alpha1.GroupVersion.WithKind("ResourceInterpreterWebhookConfiguration")),
	}
	mgr.GetLogger().Info("Override inputs", "overridePoliciesServed", apis.OverridePolicies, "clustersServed", apis.Clusters,
		"interpreterCustomizationsServed", apis.Customizations, "interpreterWebhooksServed", apis.Webhooks)
	if err := setupInterpreterIndexes(ctx, mgr.GetFieldIndexer(), apis.Customizations); err != nil {
		return fmt.Errorf("indexing for the resource interpreter: %w", err)
	}
	resourceInterpreter := newInterpreter(mgr.GetClient(), apis)
	// One tracker for both kinds: they report into the same per-cluster gauge.
	deletionWaits := newDeletionWaits()
	ledger := workapply.NewLedger()
	if err := primeLedgerOnStart(mgr, ledger, mgr.GetAPIReader()); err != nil {
		return err
	}
	workWriter, err := workapply.NewMetadataWriter(mgr.GetConfig(), mgr.GetHTTPClient())
	if err != nil {
		return err
	}
	discovery, err := discovery.NewDiscoveryClientForConfig(mgr.GetConfig())
	if err != nil {
		return fmt.Errorf("creating a discovery client: %w", err)
	}
	templateKinds := cacheable.NewKinds(discovery, mgr.GetAPIReader())
	warmer := &templateCacheWarmer{cache: mgr.GetCache(), mapper: mgr.GetRESTMapper(), kinds: templateKinds, log: mgr.GetLogger()}
	for _, c := range []struct {
		name    string
		kind    render.BindingKind
		workers int
	}{
		{ResourceBindingControllerName, render.ResourceBindingKind, opts.ResourceBindingWorkers},
		{ClusterResourceBindingControllerName, render.ClusterResourceBindingKind, opts.ClusterResourceBindingWorkers},
	} {
		if opts.Enabled != nil && !opts.Enabled[c.name] {
			continue
		}
		warmer.bindings = append(warmer.bindings, bindingAPIOf(c.kind))
		r := NewReconciler(Reconciler{
			Client:                     mgr.GetClient(),
			APIReader:                  mgr.GetAPIReader(),
			Recorder:                   mgr.GetEventRecorderFor(bindingAPIOf(c.kind).eventComponent), //nolint:staticcheck // core/v1, as Karmada's
			Kind:                       c.kind,
			ClusterSyncConcurrency:     opts.ClusterSyncConcurrency,
			BlockedWorkRecheckInterval: opts.BlockedWorkRecheckInterval,
			StuckWorkWarningAfter:      opts.StuckWorkWarningAfter,
			Ledger:                     ledger,
			WorkWriter:                 workWriter,
			TemplateKinds:              templateKinds,
			Served:                     apis,
			Interpreter:                resourceInterpreter,
			deletionWaits:              deletionWaits,
		})
		if err := r.setupWithManager(mgr, c.name, c.workers, NewRateLimiter(opts.RateLimiter), !opts.DisableWorkWatch); err != nil {
			return fmt.Errorf("setting up the %s controller: %w", c.name, err)
		}
	}
	if len(warmer.bindings) > 0 {
		if err := mgr.Add(warmer); err != nil {
			return err
		}
	}
	return nil
}

// served tells whether the API server serves gvk. Karmada serves Clusters from its
// aggregated API server; a bare API server may serve neither Clusters nor policies.
func served(mgr ctrl.Manager, gvk schema.GroupVersionKind) bool {
	_, err := mgr.GetRESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
	return err == nil
}

// SetupIndexes registers the Work and binding indexes both binding controllers use. Call it
// once per manager.
func SetupIndexes(ctx context.Context, indexer client.FieldIndexer) error {
	if err := indexer.IndexField(ctx, workapply.WorkMetadata(), workByBindingIndex, indexWorkByBinding); err != nil {
		return err
	}
	return indexBindings(ctx, indexer)
}
