// SPDX-License-Identifier: Apache-2.0

package deploy_test

import (
	"errors"
	"flag"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/binding-controller/binding-controller/internal/testenv/envtestutil"
	policyv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/policy/v1alpha1"
	workv1alpha2 "github.com/binding-controller/binding-controller/pkg/apis/work/v1alpha2"
	"github.com/binding-controller/binding-controller/pkg/controllermanager"
)

const (
	managerName        = "binding-controller-manager"
	leaderElectionName = "binding-controller-manager-leader-election"
	kubeconfigPath     = "/etc/karmada/config/karmada.config"
	binaryPath         = "/binding-controller-manager"
)

// defaultObjects is everything config/default installs: the controller's RBAC and the manager,
// and nothing else (no CRDs, no Namespace).
var defaultObjects = []string{
	"ServiceAccount karmada-system/" + managerName,
	"ClusterRole " + managerName,
	"ClusterRoleBinding " + managerName,
	"Role karmada-system/" + leaderElectionName,
	"RoleBinding karmada-system/" + leaderElectionName,
	"Deployment karmada-system/" + managerName,
	"Service karmada-system/" + managerName + "-metrics",
}

var podLabels = map[string]string{
	"app.kubernetes.io/name":      "binding-controller",
	"app.kubernetes.io/component": "controller-manager",
}

var uuidPattern = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

var _ = Describe("config/default (install into an existing Karmada)", func() {
	const dir = "config/default"

	It("holds only the controller's RBAC and manager, in karmada-system: no CRD, no Namespace", func() {
		Expect(ids(rendered[dir])).To(ConsistOf(defaultObjects))
		for _, o := range rendered[dir] {
			Expect(o.GetKind()).NotTo(Equal("CustomResourceDefinition"), id(o))
			Expect(o.GetKind()).NotTo(Equal("Namespace"), id(o))
			Expect(o.GetName()).To(HavePrefix(managerName), "names stay stable: no namePrefix")
			Expect(o.GetLabels()).To(Equal(podLabels), id(o))
		}
	})

	It("is accepted by the API server (server-side dry run, strict field validation)", func() {
		dryRunCreateAll(rendered[dir], nothingExists)
	})

	It("runs the manager as a locked-down, non-root pod, with a metrics Service", func() {
		expectLockedDownManager(deploymentOf(dir))
		expectMetricsService(dir)
	})

	It("talks to the Karmada API server with the kubeconfig from the Secret karmada-kubeconfig", func() {
		d := deploymentOf(dir)
		pod := d.Spec.Template.Spec
		c := managerContainer(d)

		Expect(c.Args).To(ContainElement("--kubeconfig=" + kubeconfigPath))
		Expect(pod.AutomountServiceAccountToken).To(HaveValue(BeFalse()), "no token of the host cluster in the pod")

		Expect(c.VolumeMounts).To(HaveLen(1))
		mount := c.VolumeMounts[0]
		Expect(mount.MountPath).To(Equal(filepath.Dir(kubeconfigPath)))
		Expect(mount.ReadOnly).To(BeTrue())
		Expect(pod.Volumes).To(HaveLen(1))
		vol := pod.Volumes[0]
		Expect(vol.Name).To(Equal(mount.Name))
		Expect(vol.Secret).NotTo(BeNil(), "the kubeconfig comes from a Secret")
		Expect(vol.Secret.SecretName).To(Equal("karmada-kubeconfig"))
		Expect(vol.Secret.Optional).To(Or(BeNil(), HaveValue(BeFalse())), "without the Secret the pod must not start")
		Expect(vol.Secret.Items).To(Equal([]corev1.KeyToPath{{Key: "karmada.config", Path: filepath.Base(kubeconfigPath)}}))
		// The non-root user must be able to read the file: group-readable with fsGroup, or world-readable.
		mode := *vol.Secret.DefaultMode
		readable := mode&0o004 != 0 || (mode&0o040 != 0 && pod.SecurityContext.FSGroup != nil && *pod.SecurityContext.FSGroup == 65532)
		Expect(readable).To(BeTrue(), "kubeconfig mode %#o is not readable by uid/gid 65532", mode)

		o := parseManagerArgs(c, targetNamespace)
		Expect(o.Kubeconfig).To(Equal(kubeconfigPath))
	})

	It("grants exactly the generated ClusterRole, whose only wildcard rule is read-only", func() {
		expectControllerRBAC(dir)
	})
})

var _ = Describe("config/local (standalone control plane)", func() {
	const dir = "config/local"

	It("adds every project CRD, the Cluster CRD included, and the namespace to config/default", func() {
		var crdNames []string
		entries, err := os.ReadDir(envtestutil.ProjectCRDDir())
		Expect(err).NotTo(HaveOccurred())
		for _, e := range entries {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			readYAML(filepath.Join("config", "crd", "bases", e.Name()), crd)
			crdNames = append(crdNames, "CustomResourceDefinition "+crd.Name)
		}
		Expect(crdNames).To(ContainElement("CustomResourceDefinition clusters.cluster.karmada.io"))

		want := append(append([]string{"Namespace " + targetNamespace}, crdNames...), defaultObjects...)
		Expect(ids(rendered[dir])).To(ConsistOf(want))
	})

	It("is accepted by the API server (server-side dry run, strict field validation)", func() {
		// envtest installed the CRDs and the suite created the namespace: those are dry-run updated.
		dryRunCreateAll(rendered[dir], func(u *unstructured.Unstructured) bool {
			return u.GetKind() == "CustomResourceDefinition" || id(u) == "Namespace "+targetNamespace
		})
	})

	It("runs the same locked-down manager with in-cluster credentials instead of the kubeconfig Secret", func() {
		d := deploymentOf(dir)
		expectLockedDownManager(d)
		expectMetricsService(dir)
		pod := d.Spec.Template.Spec
		c := managerContainer(d)
		for _, a := range c.Args {
			Expect(a).NotTo(HavePrefix("--kubeconfig"))
		}
		Expect(pod.Volumes).To(BeEmpty())
		Expect(c.VolumeMounts).To(BeEmpty())
		Expect(pod.AutomountServiceAccountToken).To(HaveValue(BeTrue()), "the pod authenticates as its ServiceAccount")
		Expect(pod.ServiceAccountName).To(Equal(managerName))

		// Everything but the credentials is as in config/default.
		def := deploymentOf("config/default")
		Expect(c.Args).To(Equal(slices.DeleteFunc(slices.Clone(managerContainer(def).Args),
			func(a string) bool { return strings.HasPrefix(a, "--kubeconfig=") })))
		Expect(parseManagerArgs(c, targetNamespace).Kubeconfig).To(BeEmpty())
	})

	It("grants exactly the generated ClusterRole, whose only wildcard rule is read-only", func() {
		expectControllerRBAC(dir)
	})
})

var _ = Describe("config/samples", func() {
	const dir = "config/samples"

	It("holds the nginx Deployment and its ResourceBinding, and a ClusterRole and its ClusterResourceBinding", func() {
		Expect(ids(rendered[dir])).To(ConsistOf(
			"Deployment default/nginx",
			"ResourceBinding default/nginx-deployment",
			"ClusterRole pod-reader",
			"ClusterResourceBinding pod-reader-clusterrole",
		))
		Expect(ids(rendered["config/samples/members"])).To(ConsistOf(
			"Cluster member1", "Cluster member2", "Cluster member3",
			"Namespace karmada-es-member1", "Namespace karmada-es-member2", "Namespace karmada-es-member3"))
	})

	It("is accepted by the API server and the project's CRDs (server-side dry run, strict field validation)", func() {
		dryRunCreateAll(rendered[dir], nothingExists)
		dryRunCreateAll(rendered["config/samples/members"], nothingExists)
	})

	It("divides the Deployment's 3 replicas over member1..member3", func() {
		deploy := typed[appsv1.Deployment](find(dir, "Deployment", "nginx"))
		rb := typed[workv1alpha2.ResourceBinding](find(dir, "ResourceBinding", "nginx-deployment"))

		Expect(rb.APIVersion).To(Equal("work.karmada.io/v1alpha2"))
		Expect(rb.Labels).To(HaveKeyWithValue(workv1alpha2.ResourceBindingPermanentIDLabel, MatchRegexp(uuidPattern.String())))
		Expect(rb.Spec.Resource).To(Equal(workv1alpha2.ObjectReference{
			APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "nginx"}))
		Expect(rb.Spec.Replicas).To(Equal(int32(3)))
		Expect(deploy.Spec.Replicas).To(HaveValue(Equal(rb.Spec.Replicas)))
		Expect(rb.Spec.Clusters).To(Equal([]workv1alpha2.TargetCluster{
			{Name: "member1", Replicas: 1}, {Name: "member2", Replicas: 1}, {Name: "member3", Replicas: 1}}))
		Expect(rb.Spec.Placement).NotTo(BeNil())
		Expect(rb.Spec.Placement.ReplicaScheduling).NotTo(BeNil())
		Expect(rb.Spec.Placement.ReplicaScheduling.ReplicaSchedulingType).To(Equal(policyv1alpha1.ReplicaSchedulingTypeDivided))
	})

	It("copies the ClusterRole to member1..member3", func() {
		typed[rbacv1.ClusterRole](find(dir, "ClusterRole", "pod-reader"))
		crb := typed[workv1alpha2.ClusterResourceBinding](find(dir, "ClusterResourceBinding", "pod-reader-clusterrole"))
		Expect(crb.Labels).To(HaveKeyWithValue(workv1alpha2.ClusterResourceBindingPermanentIDLabel, MatchRegexp(uuidPattern.String())))
		Expect(crb.Spec.Resource).To(Equal(workv1alpha2.ObjectReference{
			APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: "pod-reader"}))
		Expect(crb.Spec.Clusters).To(Equal([]workv1alpha2.TargetCluster{{Name: "member1"}, {Name: "member2"}, {Name: "member3"}}))

		rb := typed[workv1alpha2.ResourceBinding](find(dir, "ResourceBinding", "nginx-deployment"))
		Expect(crb.Labels[workv1alpha2.ClusterResourceBindingPermanentIDLabel]).
			NotTo(Equal(rb.Labels[workv1alpha2.ResourceBindingPermanentIDLabel]), "permanent ids are unique")
	})
})

var _ = Describe("Dockerfile", func() {
	var dockerfile string
	BeforeEach(func() {
		data, err := os.ReadFile(filepath.Join(envtestutil.RepoRoot(), "Dockerfile"))
		Expect(err).NotTo(HaveOccurred())
		dockerfile = string(data)
	})

	It("builds the manager statically with the Go version of go.mod", func() {
		gomod, err := os.ReadFile(filepath.Join(envtestutil.RepoRoot(), "go.mod"))
		Expect(err).NotTo(HaveOccurred())
		goLine := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindStringSubmatch(string(gomod))
		Expect(goLine).NotTo(BeNil())

		froms := regexp.MustCompile(`(?m)^FROM\s+(?:--platform=\S+\s+)?(\S+)`).FindAllStringSubmatch(dockerfile, -1)
		Expect(froms).To(HaveLen(2))
		Expect(froms[0][1]).To(Equal("golang:" + goLine[1]))
		Expect(dockerfile).To(MatchRegexp(`CGO_ENABLED=0 .*\\\n\s+go build -trimpath -ldflags "-s -w" -o /out/binding-controller-manager ./cmd/binding-controller-manager\n`))
		Expect(dockerfile).To(MatchRegexp(`(?m)^RUN --mount=type=cache,target=/go/pkg/mod \\\n\s+go mod download$`))
	})

	It("runs it as the distroless nonroot user, with the entrypoint the Deployment runs", func() {
		froms := regexp.MustCompile(`(?m)^FROM\s+(\S+)`).FindAllStringSubmatch(dockerfile, -1)
		Expect(froms[len(froms)-1][1]).To(Equal("gcr.io/distroless/static:nonroot"))
		Expect(dockerfile).To(MatchRegexp(`(?m)^USER 65532:65532$`))
		Expect(dockerfile).To(MatchRegexp(`(?m)^COPY --from=builder /out/binding-controller-manager ` + binaryPath + `$`))
		Expect(dockerfile).To(MatchRegexp(`(?m)^ENTRYPOINT \["` + binaryPath + `"\]$`))
		Expect(managerContainer(deploymentOf("config/default")).Command).To(Equal([]string{binaryPath}))
	})

	It("gets a build context holding every source file the binary needs", func() {
		data, err := os.ReadFile(filepath.Join(envtestutil.RepoRoot(), ".dockerignore"))
		Expect(err).NotTo(HaveOccurred())
		var rules []string
		for _, l := range strings.Split(string(data), "\n") {
			if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
				rules = append(rules, l)
			}
		}
		Expect(rules).To(HaveExactElements("*", "!go.mod", "!go.sum", "!cmd/", "!pkg/", "**/*_test.go", "**/testdata/"))
		Expect(dockerfile).To(MatchRegexp(`(?m)^COPY go.mod go.sum ./$`))
		Expect(dockerfile).To(MatchRegexp(`(?m)^COPY cmd/ cmd/$`))
		Expect(dockerfile).To(MatchRegexp(`(?m)^COPY pkg/ pkg/$`))

		// Every package of this module the binary is built from, and every file it embeds, is
		// under cmd/ or pkg/ and is not a test file.
		cmd := exec.Command("go", "list", "-deps",
			"-f", `{{if .Module}}{{if .Module.Main}}{{.Dir}}{{range .EmbedFiles}} {{.}}{{end}}{{end}}{{end}}`,
			"./cmd/binding-controller-manager")
		cmd.Dir = envtestutil.RepoRoot()
		out, err := cmd.Output()
		Expect(err).NotTo(HaveOccurred(), "go list: %s", exitStderr(err))
		lines := strings.Fields(strings.TrimSpace(string(out)))
		Expect(lines).NotTo(BeEmpty())
		for _, l := range lines {
			if !filepath.IsAbs(l) {
				Expect(l).NotTo(Or(HaveSuffix("_test.go"), ContainSubstring("testdata")), "embedded file %s is excluded by .dockerignore", l)
				continue
			}
			rel, err := filepath.Rel(envtestutil.RepoRoot(), l)
			Expect(err).NotTo(HaveOccurred())
			Expect(rel).To(Or(Equal("cmd"), HavePrefix("cmd/"), Equal("pkg"), HavePrefix("pkg/")), "package dir %s is not in the build context", rel)
			Expect(rel).NotTo(ContainSubstring("testdata"))
		}
	})
})

// expectLockedDownManager checks the manager Deployment's shape and security settings.
func expectLockedDownManager(d *appsv1.Deployment) {
	GinkgoHelper()
	Expect(d.Labels).To(Equal(podLabels))
	Expect(d.Spec.Selector.MatchLabels).To(Equal(podLabels))
	Expect(d.Spec.Template.Labels).To(Equal(podLabels))
	Expect(d.Spec.Replicas).To(HaveValue(BeNumerically(">=", 1)))

	pod := d.Spec.Template.Spec
	Expect(pod.ServiceAccountName).To(Equal(managerName))
	Expect(pod.TerminationGracePeriodSeconds).To(HaveValue(Equal(int64(40))))
	Expect(pod.HostNetwork).To(BeFalse())
	Expect(pod.HostPID).To(BeFalse())
	Expect(pod.HostIPC).To(BeFalse())
	psc := pod.SecurityContext
	Expect(psc).NotTo(BeNil())
	Expect(psc.RunAsNonRoot).To(HaveValue(BeTrue()))
	Expect(psc.RunAsUser).To(HaveValue(Equal(int64(65532))))
	Expect(psc.SeccompProfile).To(Equal(&corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}))

	c := managerContainer(d)
	Expect(c.Image).To(Equal("binding-controller-manager:latest"))
	Expect(c.Command).To(Equal([]string{binaryPath}))
	sc := c.SecurityContext
	Expect(sc).NotTo(BeNil())
	Expect(sc.RunAsNonRoot).To(HaveValue(BeTrue()))
	Expect(sc.RunAsUser).To(HaveValue(Equal(int64(65532))))
	Expect(sc.ReadOnlyRootFilesystem).To(HaveValue(BeTrue()))
	Expect(sc.AllowPrivilegeEscalation).To(HaveValue(BeFalse()))
	Expect(sc.Privileged).To(Or(BeNil(), HaveValue(BeFalse())))
	Expect(sc.Capabilities).NotTo(BeNil())
	Expect(sc.Capabilities.Drop).To(Equal([]corev1.Capability{"ALL"}))
	Expect(sc.Capabilities.Add).To(BeEmpty())
	Expect(sc.SeccompProfile).To(Equal(&corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}))

	Expect(c.Resources.Requests.Cpu().String()).To(Equal("100m"))
	Expect(c.Resources.Requests.Memory().String()).To(Equal("128Mi"))
	Expect(c.Resources.Limits.Cpu().String()).To(Equal("1"))
	Expect(c.Resources.Limits.Memory().String()).To(Equal("512Mi"))

	Expect(c.Args).To(ContainElements(
		"--leader-elect=true",
		"--leader-elect-resource-namespace=$(POD_NAMESPACE)",
		"--metrics-bind-address=:8080",
		"--health-probe-bind-address=:8081",
	))
	Expect(c.Env).To(ContainElement(corev1.EnvVar{Name: "POD_NAMESPACE", ValueFrom: &corev1.EnvVarSource{
		FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}}))
	// GOMEMLIMIT takes the memory limit in bytes: the kubelet writes the limit with the
	// default divisor, 1, so 512Mi reaches the runtime as 536870912.
	Expect(c.Env).To(ContainElement(And(
		HaveField("Name", "GOMEMLIMIT"),
		HaveField("ValueFrom.ResourceFieldRef.Resource", "limits.memory"),
		HaveField("ValueFrom.ResourceFieldRef.ContainerName", BeElementOf("", "manager")),
		HaveField("ValueFrom.ResourceFieldRef.Divisor", Satisfy(func(d resource.Quantity) bool {
			return d.IsZero() || d.Cmp(resource.MustParse("1")) == 0
		})),
	)))

	// The flags parse with the binary's own flag set, and what they say matches the pod.
	o := parseManagerArgs(c, targetNamespace)
	Expect(o.LeaderElect).To(BeTrue())
	Expect(o.LeaderElectResourceNamespace).To(Equal(targetNamespace))
	Expect(o.LeaderElectResourceName).To(Equal(managerName), "the Lease the leader-election Role is about")
	Expect(time.Duration(*pod.TerminationGracePeriodSeconds)*time.Second).To(BeNumerically(">", o.GracefulShutdownTimeout),
		"the pod must outlive the manager's graceful shutdown")

	Expect(c.Ports).To(ContainElement(corev1.ContainerPort{Name: "metrics", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}))
	Expect(bindPort(o.MetricsBindAddress)).To(Equal(int32(8080)))

	for _, p := range []struct {
		probe *corev1.Probe
		path  string
	}{{c.LivenessProbe, "/healthz"}, {c.ReadinessProbe, "/readyz"}} {
		Expect(p.probe).NotTo(BeNil(), p.path)
		Expect(p.probe.HTTPGet).NotTo(BeNil(), p.path)
		Expect(p.probe.HTTPGet.Path).To(Equal(p.path))
		Expect(probePort(c, p.probe)).To(Equal(int32(8081)), p.path)
		Expect(bindPort(o.HealthProbeBindAddress)).To(Equal(int32(8081)))
	}
}

// parseManagerArgs parses the container's arguments, with $(VAR) references expanded as the
// kubelet would (POD_NAMESPACE = podNamespace), with the binary's own flags and validation.
func parseManagerArgs(c corev1.Container, podNamespace string) *controllermanager.Options {
	GinkgoHelper()
	vars := map[string]string{}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace":
			vars[e.Name] = podNamespace
		case e.ValueFrom == nil:
			vars[e.Name] = e.Value
		}
	}
	ref := regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)
	args := make([]string, 0, len(c.Args))
	for _, a := range c.Args {
		args = append(args, ref.ReplaceAllStringFunc(a, func(m string) string {
			name := ref.FindStringSubmatch(m)[1]
			v, ok := vars[name]
			Expect(ok).To(BeTrue(), "argument %q refers to $(%s), which the container does not define", a, name)
			return v
		}))
	}

	o := controllermanager.NewOptions()
	fs := flag.NewFlagSet(managerName, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o.AddFlags(fs)
	Expect(fs.Parse(args)).To(Succeed(), "manager arguments %q", args)
	Expect(fs.Args()).To(BeEmpty(), "manager arguments %q", args)
	Expect(o.Validate()).To(Succeed())
	return o
}

// probePort resolves the probe's port, by number or by container port name.
func probePort(c corev1.Container, p *corev1.Probe) int32 {
	GinkgoHelper()
	port := p.HTTPGet.Port
	if port.StrVal == "" {
		return port.IntVal
	}
	for _, cp := range c.Ports {
		if cp.Name == port.StrVal {
			return cp.ContainerPort
		}
	}
	Fail("probe port " + port.StrVal + " is not a container port")
	return 0
}

// bindPort returns the port of a bind address such as ":8081".
func bindPort(addr string) int32 {
	GinkgoHelper()
	_, port, err := net.SplitHostPort(addr)
	Expect(err).NotTo(HaveOccurred())
	n, err := strconv.ParseInt(port, 10, 32)
	Expect(err).NotTo(HaveOccurred())
	return int32(n)
}

// expectControllerRBAC checks the controller's RBAC as rendered from dir.
func expectControllerRBAC(dir string) {
	GinkgoHelper()
	saSubject := []rbacv1.Subject{{Kind: "ServiceAccount", Name: managerName, Namespace: targetNamespace}}

	generated := &rbacv1.ClusterRole{}
	readYAML("config/rbac/role.yaml", generated)
	Expect(generated.Name).To(Equal(managerName))
	cr := typed[rbacv1.ClusterRole](find(dir, "ClusterRole", managerName))
	Expect(cr.Rules).To(Equal(generated.Rules), "the ClusterRole must be config/rbac/role.yaml as generated")
	Expect(cr.AggregationRule).To(BeNil())

	wildcardRules := 0
	for _, r := range cr.Rules {
		desc := describeRule(r.APIGroups, r.Resources, r.Verbs)
		Expect(r.NonResourceURLs).To(BeEmpty(), desc)
		Expect(r.Verbs).NotTo(ContainElement("*"), desc)
		if slices.Contains(r.APIGroups, "*") || slices.Contains(r.Resources, "*") {
			wildcardRules++
			Expect(r.Verbs).To(ConsistOf("get", "list", "watch"), "a wildcard rule must be read-only: %s", desc)
		}
		// Leader election's Lease stays in the namespaced Role; of the core group, the
		// ClusterRole grants events alone (the controller's events, in every namespace).
		Expect(slices.Contains(r.APIGroups, "coordination.k8s.io")).
			To(BeFalse(), "leases belong in the leader-election Role, not the ClusterRole: %s", desc)
		if slices.Contains(r.APIGroups, "") {
			Expect(r.Resources).To(Equal([]string{"events"}), "of the core group, only events: %s", desc)
		}
	}
	Expect(wildcardRules).To(Equal(1))

	crb := typed[rbacv1.ClusterRoleBinding](find(dir, "ClusterRoleBinding", managerName))
	Expect(crb.RoleRef).To(Equal(rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: managerName}))
	Expect(crb.Subjects).To(Equal(saSubject))

	role := typed[rbacv1.Role](find(dir, "Role", leaderElectionName))
	Expect(role.Namespace).To(Equal(targetNamespace))
	Expect(role.Rules).To(Equal([]rbacv1.PolicyRule{
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"},
			Verbs: []string{"get", "create", "update"}},
		{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"list", "create", "update", "delete"}},
	}))
	rb := typed[rbacv1.RoleBinding](find(dir, "RoleBinding", leaderElectionName))
	Expect(rb.Namespace).To(Equal(targetNamespace))
	Expect(rb.RoleRef).To(Equal(rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: leaderElectionName}))
	Expect(rb.Subjects).To(Equal(saSubject))

	sa := typed[corev1.ServiceAccount](find(dir, "ServiceAccount", managerName))
	Expect(sa.Namespace).To(Equal(targetNamespace))
	Expect(sa.AutomountServiceAccountToken).To(HaveValue(BeFalse()))
	Expect(deploymentOf(dir).Spec.Template.Spec.ServiceAccountName).To(Equal(sa.Name))
}

// expectMetricsService checks that the metrics Service of dir reaches the manager's metrics port.
func expectMetricsService(dir string) {
	GinkgoHelper()
	svc := typed[corev1.Service](find(dir, "Service", managerName+"-metrics"))
	Expect(svc.Spec.Selector).To(Equal(podLabels))
	Expect(svc.Spec.Ports).To(HaveLen(1))
	Expect(svc.Spec.Ports[0].Port).To(Equal(int32(8080)))
	Expect(svc.Spec.Ports[0].TargetPort.StrVal).To(Equal("metrics"))
	Expect(managerContainer(deploymentOf(dir)).Ports).To(ContainElement(HaveField("Name", "metrics")))
}

func exitStderr(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(ee.Stderr)
	}
	return ""
}
