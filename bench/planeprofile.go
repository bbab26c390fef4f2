// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"k8s.io/client-go/rest"
)

// profileAPIServer writes a CPU profile of kube-apiserver, taken over d, to path. It
// reads the API server's own /debug/pprof (on by default), so the profile shows where
// the API server's cores go under the load running at the time.
func profileAPIServer(ctx context.Context, cfg *rest.Config, d time.Duration, path string) error {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return fmt.Errorf("profiling kube-apiserver: %w", err)
	}
	if err := fetchProfile(ctx, hc, cfg.Host, d, path); err != nil {
		return fmt.Errorf("profiling kube-apiserver: %w", err)
	}
	return nil
}

// profileController writes a CPU profile of the controller, taken over d, to path, when
// its flags serve one (--enable-pprof --profiling-bind-address=host:port); otherwise
// it does nothing.
func profileController(ctx context.Context, args []string, d time.Duration, path string) (bool, error) {
	addr := managerFlag(args, "profiling-bind-address")
	if enabled := managerFlag(args, "enable-pprof"); addr == "" || enabled == "" || enabled == "false" {
		return false, nil
	}
	if err := fetchProfile(ctx, http.DefaultClient, "http://"+addr, d, path); err != nil {
		return false, fmt.Errorf("profiling the controller: %w", err)
	}
	return true, nil
}

func fetchProfile(ctx context.Context, hc *http.Client, host string, d time.Duration, path string) error {
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
