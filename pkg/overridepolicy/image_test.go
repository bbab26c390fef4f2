// SPDX-License-Identifier: Apache-2.0

package overridepolicy

import (
	"strings"
	"testing"

	policyv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/policy/v1alpha1"
)

const sha256Digest = "sha256:7031c1b283388d2c2e09b57badb803c05ebed362dc88d84b480cc47f72a21097"

func TestParseImage(t *testing.T) {
	tests := []struct {
		ref     string
		want    image
		wantErr string
	}{
		{ref: "nginx", want: image{repository: "nginx"}},
		{ref: "nginx:1.25", want: image{repository: "nginx", tag: "1.25"}},
		{ref: "library/nginx:latest", want: image{repository: "library/nginx", tag: "latest"}},
		{ref: "docker.io/library/nginx", want: image{registry: "docker.io", repository: "library/nginx"}},
		{ref: "registry.k8s.io/kube-apiserver:v1.30.0", want: image{registry: "registry.k8s.io", repository: "kube-apiserver", tag: "v1.30.0"}},
		{ref: "fictional.registry.example:10443/karmada/controller:v1", want: image{registry: "fictional.registry.example:10443", repository: "karmada/controller", tag: "v1"}},
		{ref: "localhost/app", want: image{registry: "localhost", repository: "app"}},
		{ref: "localhost:5000/app:dev", want: image{registry: "localhost:5000", repository: "app", tag: "dev"}},
		{ref: "myhost:5000/app", want: image{registry: "myhost:5000", repository: "app"}},
		{ref: "MyRegistry/app", want: image{registry: "MyRegistry", repository: "app"}},
		{ref: "[fd00::1]:5000/app", want: image{registry: "[fd00::1]:5000", repository: "app"}},
		{ref: "nginx@" + sha256Digest, want: image{repository: "nginx", digest: sha256Digest}},
		{ref: "r.example/a/b/c:1.0@" + sha256Digest, want: image{registry: "r.example", repository: "a/b/c", tag: "1.0", digest: sha256Digest}},
		{ref: "my_app-name/sub__dir.v2", want: image{repository: "my_app-name/sub__dir.v2"}},
		{ref: "", wantErr: "at least one component"},
		{ref: "::bad", wantErr: "invalid reference format"},
		{ref: "Nginx", wantErr: "must be lowercase"},
		{ref: "nginx:", wantErr: "invalid reference format"},
		{ref: "nginx:-bad", wantErr: "invalid reference format"},
		{ref: "nginx:" + strings.Repeat("a", 129), wantErr: "invalid reference format"},
		{ref: "nginx@sha256:abc", wantErr: "invalid reference format"},
		{ref: "nginx@sha256:" + strings.Repeat("a", 63), wantErr: "invalid sha256 digest"},
		{ref: "nginx@sha256:" + strings.Repeat("A", 64), wantErr: "invalid sha256 digest"},
		{ref: "nginx@md5:" + strings.Repeat("a", 32), wantErr: "unsupported digest algorithm"},
		{ref: "a/" + strings.Repeat("b", 255), wantErr: "not be more than 255"},
		{ref: "nginx latest", wantErr: "invalid reference format"},
		{ref: "/nginx", wantErr: "invalid reference format"},
	}
	for _, tt := range tests {
		got, err := parseImage(tt.ref)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("parseImage(%q) error = %v, want one containing %q", tt.ref, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("parseImage(%q) error = %v", tt.ref, err)
			continue
		}
		if got != tt.want {
			t.Errorf("parseImage(%q) = %+v, want %+v", tt.ref, got, tt.want)
		}
		if got.String() != tt.ref {
			t.Errorf("parseImage(%q).String() = %q, want the reference back", tt.ref, got.String())
		}
	}
}

func TestOverrideImage(t *testing.T) {
	o := func(c policyv1alpha1.ImageComponent, op policyv1alpha1.OverriderOperator, v string) *policyv1alpha1.ImageOverrider {
		return &policyv1alpha1.ImageOverrider{Component: c, Operator: op, Value: v}
	}
	tests := []struct {
		ref     string
		o       *policyv1alpha1.ImageOverrider
		want    string
		wantErr string
	}{
		{"nginx:1.25", o(policyv1alpha1.Registry, "add", "registry.example"), "registry.example/nginx:1.25", ""},
		{"registry.k8s.io/pause:3.9", o(policyv1alpha1.Registry, "add", ".cn"), "registry.k8s.io.cn/pause:3.9", ""},
		{"registry.k8s.io/pause:3.9", o(policyv1alpha1.Registry, "replace", "mirror:5000"), "mirror:5000/pause:3.9", ""},
		{"registry.k8s.io/pause:3.9", o(policyv1alpha1.Registry, "remove", ""), "pause:3.9", ""},
		{"nginx", o(policyv1alpha1.Registry, "remove", ""), "nginx", ""},
		{"registry.k8s.io/pause:3.9", o(policyv1alpha1.Registry, "replace", "bad registry"), "", "not a valid registry"},
		{"r.example/team/app:1", o(policyv1alpha1.Repository, "add", "-debug"), "r.example/team/app-debug:1", ""},
		{"r.example/team/app:1", o(policyv1alpha1.Repository, "replace", "other/app"), "r.example/other/app:1", ""},
		{"r.example/team/app:1", o(policyv1alpha1.Repository, "remove", ""), "", "invalid image reference \"r.example/:1\""},
		{"r.example/team/app:1", o(policyv1alpha1.Repository, "replace", "Upper"), "", "invalid image reference"},
		{"app:1.0", o(policyv1alpha1.Tag, "add", "-rc1"), "app:1.0-rc1", ""},
		{"app", o(policyv1alpha1.Tag, "add", "latest"), "app:latest", ""},
		{"app:1.0", o(policyv1alpha1.Tag, "replace", "2.0"), "app:2.0", ""},
		{"app:1.0", o(policyv1alpha1.Tag, "replace", sha256Digest), "app@" + sha256Digest, ""},
		{"app@" + sha256Digest, o(policyv1alpha1.Tag, "replace", "2.0"), "app:2.0", ""},
		{"app:1.0@" + sha256Digest, o(policyv1alpha1.Tag, "replace", "2.0"), "app:2.0", ""},
		// Karmada keeps the tag alone (imageparser.Parse), whichever component changes.
		{"app:1.0@" + sha256Digest, o(policyv1alpha1.Registry, "replace", "r.example"), "r.example/app:1.0", ""},
		{"app:1.0@" + sha256Digest, o(policyv1alpha1.Repository, "add", "-v2"), "app-v2:1.0", ""},
		{"app:1.0@" + sha256Digest, o(policyv1alpha1.Tag, "add", "-rc"), "app:1.0-rc", ""},
		{"app:1.0", o(policyv1alpha1.Tag, "remove", ""), "app", ""},
		{"app:1.0@" + sha256Digest, o(policyv1alpha1.Tag, "remove", ""), "app", ""},
		{"app:1.0", o(policyv1alpha1.Tag, "replace", "not valid"), "", "neither a valid tag nor a valid digest"},
		{"app:1.0", o(policyv1alpha1.Tag, "replace", "sha256:1234"), "", "neither a valid tag nor a valid digest"},
		{"app:1.0", o("Name", "replace", "x"), "", "unsupported image component"},
		{"app:1.0", o(policyv1alpha1.Tag, "append", "x"), "", "unsupported operator"},
		{"::bad", o(policyv1alpha1.Tag, "remove", ""), "", `invalid image reference "::bad"`},
		{"App", o(policyv1alpha1.Tag, "remove", ""), "", `invalid image reference "App": repository name must be lowercase`},
	}
	for _, tt := range tests {
		got, err := overrideImage(tt.ref, tt.o)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("overrideImage(%q, %+v) = %q, %v; want error containing %q", tt.ref, *tt.o, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("overrideImage(%q, %+v) = %q, %v; want %q", tt.ref, *tt.o, got, err, tt.want)
		}
	}
}
