package bindingcontroller

import (
	"context"
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
	"github.com/binding-controller/binding-controller/pkg/render"
)

func clusterRoleBinding() (*rbacv1.ClusterRole, *workv1alpha2.ClusterResourceBinding) {
	role := &rbacv1.ClusterRole{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
		ObjectMeta: metav1.ObjectMeta{Name: "reader", UID: "uid-reader"},
	}
	crb := &workv1alpha2.ClusterResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "reader-clusterrole",
			Labels: map[string]string{workv1alpha2.ClusterResourceBindingPermanentIDLabel: "crb-1"}},
		Spec: workv1alpha2.ResourceBindingSpec{
			Resource: workv1alpha2.ObjectReference{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: "reader"},
			Clusters: []workv1alpha2.TargetCluster{{Name: "member1"}},
		},
	}
	return role, crb
}

// The success event names the binding as current Karmada does (capital R, and no stray
// slash before a cluster-scoped binding's name), on the binding and on its template.
func TestSyncWorkSucceedNamesTheBindingAsKarmadaDoes(t *testing.T) {
	t.Run("ResourceBinding", func(t *testing.T) {
		h := newHarness(t, interceptor.Funcs{}, seedDeployment(), seedBinding("member1"))
		if err := h.reconcile(); err != nil {
			t.Fatal(err)
		}
		want := "Normal SyncWorkSucceed Sync work of ResourceBinding(default/nginx-deployment) successful."
		if evs := h.events(); !slices.Equal(evs, []string{want, want}) {
			t.Fatalf("events %q, want %q on the binding and on the template", evs, want)
		}
	})
	t.Run("ClusterResourceBinding", func(t *testing.T) {
		role, crb := clusterRoleBinding()
		h := newHarness(t, interceptor.Funcs{}, role, crb)
		r := NewReconciler(Reconciler{Client: h.client, APIReader: h.client, Recorder: h.recorder, Kind: render.ClusterResourceBindingKind})
		if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Name: crb.Name}}); err != nil {
			t.Fatal(err)
		}
		want := "Normal SyncWorkSucceed Sync work of ClusterResourceBinding(reader-clusterrole) successful."
		if evs := h.events(); !slices.Equal(evs, []string{want, want}) {
			t.Fatalf("events %q, want %q on the binding and on the template", evs, want)
		}
	})
}
