// SPDX-License-Identifier: Apache-2.0

// Command run-local ('make run') starts a local control plane — a real kube-apiserver
// and etcd from bin/k8s with the project's CRDs, the execution namespaces and Clusters
// member1..member3 — writes its kubeconfig to bin/local/kubeconfig, and runs the built
// controller-manager against it in the foreground. Ctrl-C (or SIGTERM) stops the
// manager, then the control plane, and leaves nothing running.
//
//	go run ./hack/run-local [--manager bin/binding-controller-manager] [-- manager flags...]
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/binding-controller/binding-controller/internal/testenv/envtestutil"
	"github.com/binding-controller/binding-controller/internal/testenv/executionsim"
	"github.com/binding-controller/binding-controller/internal/testenv/localplane"
)

const (
	defaultMetrics = ":8080"
	defaultProbes  = ":8081"
	// stopGrace is how long the manager may take after SIGTERM; its own
	// --graceful-shutdown-timeout defaults to 30s.
	stopGrace = 40 * time.Second
)

func main() {
	os.Exit(run())
}

func run() int {
	// envtest logs through controller-runtime; its chatter is not wanted here.
	ctrllog.SetLogger(zap.New(zap.WriteTo(io.Discard)))
	// An own flag set: controller-runtime registers --kubeconfig on flag.CommandLine.
	fs := flag.NewFlagSet("run-local", flag.ExitOnError)
	manager := fs.String("manager", "bin/binding-controller-manager", "path of the controller-manager binary ('make build')")
	kubeconfig := fs.String("kubeconfig", "bin/local/kubeconfig", "where to write the local control plane's kubeconfig")
	members := fs.String("members", strings.Join(localplane.DefaultMembers, ","), "comma-separated member cluster names")
	simulate := fs.Bool("simulate-execution", true,
		"play Karmada's execution side: release the finalizer of deleted Works, as a connected member does")
	webhook := fs.Bool("karmada-webhook", false,
		"put karmada-webhook's Work mutation in front of the API server, as on a real Karmada control plane: "+
			"every Work gets a permanent ID (work.karmada.io/permanent-id), copied into its manifests")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: run-local [flags] [-- controller-manager flags]\n\n"+
			"Starts a local kube-apiserver + etcd with the Karmada CRDs and member clusters, and runs the\n"+
			"controller-manager against it until Ctrl-C.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	_ = fs.Parse(os.Args[1:])
	extra := fs.Args()

	// Catch Ctrl-C before anything starts: the control plane and the manager run in their
	// own process groups, so the terminal's SIGINT reaches only us, and we stop them in order.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)

	if _, err := os.Stat(*manager); err != nil {
		logf("controller-manager binary %s not found; run 'make build' first (or pass --manager)", *manager)
		return 1
	}
	managerArgs := []string{"--kubeconfig", *kubeconfig, "--leader-elect=false"}
	metricsAddr, probeAddr, notes, err := bindAddresses(extra)
	if err != nil {
		logf("choosing ports: %v", err)
		return 1
	}
	managerArgs = append(append(managerArgs, notes...), extra...)

	logf("starting the local control plane (kube-apiserver and etcd from %s)…", display(envtestutil.BinaryAssetsDir()))
	type started struct {
		plane *localplane.Plane
		err   error
	}
	startDone := make(chan started, 1)
	go func() {
		p, err := localplane.Start(context.Background(), localplane.Options{
			Members: strings.FieldsFunc(*members, func(r rune) bool { return r == ',' || r == ' ' }), KubeconfigPath: *kubeconfig,
			KarmadaWorkWebhook: *webhook,
		})
		startDone <- started{p, err}
	}()
	var plane *localplane.Plane
	select {
	case s := <-startDone:
		if s.err != nil {
			logf("%v", s.err)
			return 1
		}
		plane = s.plane
	case sig := <-sigs:
		logf("%s: waiting for the control plane to finish starting, then stopping it…", sig)
		if s := <-startDone; s.err == nil {
			return stopPlane(s.plane, 0)
		}
		return 0
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if *simulate {
		go executionsim.New(plane.Client, 200*time.Millisecond).Run(ctx)
	}

	logf("starting %s %s", *manager, strings.Join(managerArgs, " "))
	proc, err := localplane.StartProcess(*manager, managerArgs, os.Stdout, os.Stderr)
	if err != nil {
		logf("%v", err)
		cancel()
		return stopPlane(plane, 1)
	}
	go func() {
		if waitReady(ctx, probeAddr, proc) {
			printBanner(plane, *kubeconfig, metricsAddr, probeAddr, *simulate, *webhook)
		}
	}()

	select {
	case <-proc.Done():
		code := proc.ExitCode()
		logf("binding-controller-manager exited (%v); stopping the control plane", describeExit(proc))
		cancel()
		return stopPlane(plane, code)
	case sig := <-sigs:
		logf("%s: stopping binding-controller-manager (SIGTERM; Ctrl-C again to kill it)…", sig)
	}
	cancel()
	code := 0
	stopped := make(chan error, 1)
	go func() { stopped <- proc.Stop(stopGrace) }()
	select {
	case err := <-stopped:
		if err != nil {
			logf("binding-controller-manager: %v", err)
			code = 1
		}
	case <-sigs:
		logf("killing binding-controller-manager")
		proc.Kill()
		code = 1
	}
	return stopPlane(plane, code)
}

// bindAddresses picks the manager's metrics and probe addresses: the defaults when they
// are free, else free ports, unless the extra args set them. It returns the addresses
// and the flags to pass.
func bindAddresses(extra []string) (metrics, probes string, args []string, err error) {
	pick := func(flagName, def string) (string, error) {
		if v, ok := flagValue(extra, flagName); ok {
			return v, nil
		}
		addr, moved, err := localplane.BindAddress(def)
		if err != nil {
			return "", err
		}
		if moved {
			logf("%s is taken; --%s=%s", def, flagName, addr)
			args = append(args, "--"+flagName+"="+addr)
		}
		return addr, nil
	}
	if metrics, err = pick("metrics-bind-address", defaultMetrics); err != nil {
		return "", "", nil, err
	}
	if probes, err = pick("health-probe-bind-address", defaultProbes); err != nil {
		return "", "", nil, err
	}
	return metrics, probes, args, nil
}

// flagValue finds -name=v, --name=v, -name v or --name v in args.
func flagValue(args []string, name string) (string, bool) {
	for i, a := range args {
		trimmed := strings.TrimLeft(a, "-")
		if trimmed == a || len(a)-len(trimmed) > 2 {
			continue
		}
		if v, ok := strings.CutPrefix(trimmed, name+"="); ok {
			return v, true
		}
		if trimmed == name && i+1 < len(args) {
			return args[i+1], true
		}
	}
	return "", false
}

// waitReady waits until the manager's caches have synced (true), or it exits (false).
// With probes disabled it returns true at once.
func waitReady(ctx context.Context, probeAddr string, proc *localplane.Process) bool {
	if probeAddr == "0" || probeAddr == "" {
		return true
	}
	err := localplane.WaitReady(ctx, "http://"+localhost(probeAddr)+"/readyz", proc, 60*time.Second)
	select {
	case <-ctx.Done():
		return false
	case <-proc.Done():
		return false
	default:
	}
	if err != nil {
		logf("binding-controller-manager: %v; see its log above", err)
	}
	return true
}

// localhost turns ":8081" into "localhost:8081".
func localhost(addr string) string {
	if strings.HasPrefix(addr, ":") {
		return "localhost" + addr
	}
	return addr
}

func printBanner(plane *localplane.Plane, kubeconfig, metricsAddr, probeAddr string, simulate, webhook bool) {
	kc := display(kubeconfig)
	export := kc
	if !filepath.IsAbs(kc) {
		export = "$PWD/" + kc
	}
	kubectl := display(filepath.Join(envtestutil.BinaryAssetsDir(), "kubectl"))
	endpoint := func(addr, paths string) string {
		if addr == "0" || addr == "" {
			return "disabled"
		}
		return "http://" + localhost(addr) + paths
	}
	execution := "not simulated: a deleted Work keeps its finalizer (karmada.io/execution-controller)"
	if simulate {
		execution = "simulated: deleted Works are released, as connected members do"
	}
	mutation := "off (--karmada-webhook puts karmada-webhook's Work mutation in front)"
	if webhook {
		mutation = "karmada-webhook's Work mutation: permanent IDs on every Work and its manifests"
	}
	line := strings.Repeat("─", 78)
	var b strings.Builder
	fmt.Fprintf(&b, "\n%s\n", line)
	fmt.Fprintf(&b, " Local Karmada control plane is up, with binding-controller-manager running.\n")
	fmt.Fprintf(&b, "   kube-apiserver  %s (etcd, CRDs from %s)\n", plane.APIServerURL(), display(envtestutil.ProjectCRDDir()))
	fmt.Fprintf(&b, "   clusters        %s (Works go to karmada-es-<cluster>)\n", strings.Join(plane.Members, ", "))
	fmt.Fprintf(&b, "   kubeconfig      %s\n", kc)
	fmt.Fprintf(&b, "   metrics         %s\n", endpoint(metricsAddr, "/metrics"))
	fmt.Fprintf(&b, "   probes          %s\n", endpoint(probeAddr, "/healthz, /readyz"))
	fmt.Fprintf(&b, "   execution side  %s\n", execution)
	fmt.Fprintf(&b, "   webhook         %s\n", mutation)
	fmt.Fprintf(&b, "\n In another terminal:\n")
	fmt.Fprintf(&b, "   export KUBECONFIG=%s\n", export)
	fmt.Fprintf(&b, "   %s get clusters\n", kubectl)
	fmt.Fprintf(&b, "   %s apply -k config/samples/     # resource templates and their bindings\n", kubectl)
	fmt.Fprintf(&b, "   %s get resourcebindings,works -A\n", kubectl)
	fmt.Fprintf(&b, "   %s get events -n default\n", kubectl)
	fmt.Fprintf(&b, "\n Ctrl-C stops the controller-manager and the control plane.\n%s\n\n", line)
	_, _ = os.Stdout.WriteString(b.String())
}

// stopPlane stops the control plane and returns code, or 1 when stopping failed.
func stopPlane(plane *localplane.Plane, code int) int {
	logf("stopping the control plane…")
	if err := plane.Stop(); err != nil {
		logf("stopping the control plane: %v", err)
		return max(code, 1)
	}
	logf("stopped; nothing left running")
	return code
}

func describeExit(p *localplane.Process) string {
	if err := p.Err(); err != nil {
		return err.Error()
	}
	return "exit status 0"
}

// display shows path relative to the working directory when it lies beneath it.
func display(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return path
	}
	wd, err := os.Getwd()
	if err != nil {
		return abs
	}
	rel, err := filepath.Rel(wd, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return abs
	}
	return rel
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "run-local: "+format+"\n", args...)
}
