// SPDX-License-Identifier: Apache-2.0

// Package thirdparty holds the resource interpreter customizations that Karmada bundles
// for third-party kinds (OpenKruise, Argo Workflows, KubeRay), as Karmada ships them, so
// that those kinds are interpreted without any customization of the user's own.
package thirdparty

import (
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"sync"

	"sigs.k8s.io/yaml"

	configv1alpha1 "github.com/binding-controller/binding-controller/pkg/apis/config/v1alpha1"
)

//go:embed customizations/*/*/*/customizations.yaml
var files embed.FS

// Customizations returns the bundled customizations, in name order.
func Customizations() []configv1alpha1.ResourceInterpreterCustomization {
	list, err := load()
	if err != nil {
		// The files are part of the binary and a test loads them all.
		panic(err)
	}
	return list
}

var load = sync.OnceValues(func() ([]configv1alpha1.ResourceInterpreterCustomization, error) {
	paths, err := fs.Glob(files, "customizations/*/*/*/customizations.yaml")
	if err != nil {
		return nil, err
	}
	var list []configv1alpha1.ResourceInterpreterCustomization
	for _, p := range paths {
		raw, err := files.ReadFile(p)
		if err != nil {
			return nil, err
		}
		var c configv1alpha1.ResourceInterpreterCustomization
		if err := yaml.UnmarshalStrict(raw, &c); err != nil {
			return nil, fmt.Errorf("bundled customization %s: %w", p, err)
		}
		list = append(list, c)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
	return list, nil
})
