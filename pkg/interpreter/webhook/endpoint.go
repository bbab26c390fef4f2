// SPDX-License-Identifier: Apache-2.0

package webhook

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
)

// endpointURL is where a webhook is called: its url, or https://<service>.<namespace>.svc:<port><path>
// (port 443 unless given), as Kubernetes and Karmada reach a webhook Service. Only HTTPS
// is accepted: the request carries the workload's whole template.
func endpointURL(cc admissionregistrationv1.WebhookClientConfig) (*url.URL, error) {
	if s := cc.Service; s != nil {
		port := int32(443)
		if s.Port != nil {
			port = *s.Port
		}
		path := "/"
		if s.Path != nil && *s.Path != "" {
			path = *s.Path
		}
		return &url.URL{Scheme: "https", Host: net.JoinHostPort(s.Name+"."+s.Namespace+".svc", strconv.Itoa(int(port))), Path: path}, nil
	}
	if cc.URL == nil || *cc.URL == "" {
		return nil, errors.New("the clientConfig has neither a service nor a url")
	}
	u, err := url.Parse(*cc.URL)
	switch {
	case err != nil:
		return nil, fmt.Errorf("the clientConfig's url: %w", err)
	case u.Scheme != "https":
		return nil, fmt.Errorf("the clientConfig's url %q is not https, the only scheme allowed", *cc.URL)
	case u.Host == "":
		return nil, fmt.Errorf("the clientConfig's url %q has no host", *cc.URL)
	case u.User != nil || u.RawQuery != "" || u.Fragment != "":
		// As Kubernetes validates webhook URLs.
		return nil, fmt.Errorf("the clientConfig's url %q may have no user, query or fragment", *cc.URL)
	}
	if u.Path == "" {
		u.Path = "/"
	}
	return u, nil
}

// maxClients bounds the cached clients; past it the cache starts over, so configurations
// that come and go leave no clients behind.
const maxClients = 100

// clients holds one HTTP client per clientConfig, so calls to a webhook reuse its
// connections.
type clients struct {
	mu      sync.Mutex
	byInput map[string]*http.Client
}

func (c *clients) get(cc admissionregistrationv1.WebhookClientConfig) (*http.Client, error) {
	key, err := json.Marshal(cc)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if hc, ok := c.byInput[string(key)]; ok {
		return hc, nil
	}
	hc, err := newHTTPClient(cc.CABundle)
	if err != nil {
		return nil, err
	}
	if c.byInput == nil || len(c.byInput) >= maxClients {
		for _, old := range c.byInput {
			old.CloseIdleConnections()
		}
		c.byInput = map[string]*http.Client{}
	}
	c.byInput[string(key)] = hc
	return hc, nil
}

// newHTTPClient trusts caBundle, or the system's roots when it is empty, as Kubernetes'
// webhook clients do. Time limits come from each call's context.
func newHTTPClient(caBundle []byte) (*http.Client, error) {
	var roots *x509.CertPool
	if len(caBundle) > 0 {
		roots = x509.NewCertPool()
		if !roots.AppendCertsFromPEM(caBundle) {
			return nil, errors.New("the clientConfig's caBundle holds no PEM certificate")
		}
	}
	return &http.Client{Transport: &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		DialContext:         (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSClientConfig:     &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout: 10 * time.Second,
		IdleConnTimeout:     90 * time.Second,
		MaxIdleConnsPerHost: 25,
	}}, nil
}
