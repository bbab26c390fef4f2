// SPDX-License-Identifier: Apache-2.0

// Package cpuprofile takes CPU profiles of the processes a benchmark runs, over the
// load running at the time: kube-apiserver's through its own /debug/pprof (on by
// default), the controller's when its flags serve one.
package cpuprofile

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"k8s.io/client-go/rest"

	"github.com/binding-controller/binding-controller/bench/controller"
)

// APIServer writes a CPU profile of kube-apiserver, taken over d, to path.
func APIServer(ctx context.Context, cfg *rest.Config, d time.Duration, path string) error {
	hc, err := rest.HTTPClientFor(cfg)
	if err == nil {
		err = fetch(ctx, hc, cfg.Host, d, path)
	}
	if err != nil {
		return fmt.Errorf("profiling kube-apiserver: %w", err)
	}
	return nil
}

// Controller writes a CPU profile of the controller, taken over d, to path, when its
// flags (args) serve one (--enable-pprof --profiling-bind-address=host:port); otherwise
// it does nothing and says so.
func Controller(ctx context.Context, args []string, d time.Duration, path string) (bool, error) {
	addr := controller.Flag(args, "profiling-bind-address")
	if enabled := controller.Flag(args, "enable-pprof"); addr == "" || enabled == "" || enabled == "false" {
		return false, nil
	}
	if err := fetch(ctx, http.DefaultClient, "http://"+addr, d, path); err != nil {
		return false, fmt.Errorf("profiling the controller: %w", err)
	}
	return true, nil
}

func fetch(ctx context.Context, hc *http.Client, host string, d time.Duration, path string) error {
	url := fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", strings.TrimSuffix(host, "/"), int(d.Seconds()))
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("%s: %s: %s", url, resp.Status, body)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}
