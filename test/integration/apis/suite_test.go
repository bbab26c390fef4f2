// SPDX-License-Identifier: Apache-2.0

// Package apis_test checks the project's Karmada-compatible API types and CRDs:
//
//   - the generated CRDs (config/crd/bases) against Karmada's published CRDs
//     (test/testdata/karmada-crds): names, scope, subresources, printer columns, schema;
//   - that the fixtures (test/testdata/fixtures) fill every field of the generated schemas;
//   - on a real kube-apiserver (envtest) with the project's CRDs: every fixture
//     round-trips through the typed client without losing a field, and a
//     ResourceBinding's unmodelled spec/status fields are preserved;
//   - on a second kube-apiserver with Karmada's own CRDs: the same fixtures round-trip
//     too (wire compatibility);
//   - on both, Works written with metadata-only answers (workapply.MetadataWriter) are
//     stored as a controller-runtime client stores them, and errors keep their messages.
//
// Run with: KUBEBUILDER_ASSETS=$PWD/bin/k8s go test ./test/integration/apis/... -count=1
package apis_test

import (
	"testing"

	"github.com/binding-controller/binding-controller/internal/testenv/suite"
)

func TestAPIs(t *testing.T) {
	suite.Run(t, "API types and CRDs integration suite", suite.Timeouts{})
}
