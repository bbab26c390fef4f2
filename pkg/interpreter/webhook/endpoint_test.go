// SPDX-License-Identifier: Apache-2.0

package webhook

import (
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/utils/ptr"
)

func TestEndpointURL(t *testing.T) {
	svc := func(port *int32, path *string) admissionregistrationv1.WebhookClientConfig {
		return admissionregistrationv1.WebhookClientConfig{Service: &admissionregistrationv1.ServiceReference{
			Namespace: "karmada-system", Name: "interpreter", Port: port, Path: path}}
	}
	url := func(u string) admissionregistrationv1.WebhookClientConfig {
		return admissionregistrationv1.WebhookClientConfig{URL: ptr.To(u)}
	}
	for _, c := range []struct {
		name    string
		cc      admissionregistrationv1.WebhookClientConfig
		want    string
		wantErr bool
	}{
		{"service", svc(ptr.To[int32](8443), ptr.To("/interpreter")), "https://interpreter.karmada-system.svc:8443/interpreter", false},
		{"service on 443 at /", svc(nil, nil), "https://interpreter.karmada-system.svc:443/", false},
		{"url", url("https://hooks.example.io:9443/revise"), "https://hooks.example.io:9443/revise", false},
		{"url without a path", url("https://hooks.example.io"), "https://hooks.example.io/", false},
		{"http url", url("http://hooks.example.io/revise"), "", true},
		{"url with a query", url("https://hooks.example.io/revise?x=1"), "", true},
		{"url with a user", url("https://me@hooks.example.io/revise"), "", true},
		{"url without a host", url("https:///revise"), "", true},
		{"neither", admissionregistrationv1.WebhookClientConfig{}, "", true},
	} {
		u, err := endpointURL(c.cc)
		if (err != nil) != c.wantErr {
			t.Errorf("%s: error %v, want error %v", c.name, err, c.wantErr)
			continue
		}
		if err == nil && u.String() != c.want {
			t.Errorf("%s: %s, want %s", c.name, u, c.want)
		}
	}
}
