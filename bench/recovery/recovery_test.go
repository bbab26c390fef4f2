// SPDX-License-Identifier: Apache-2.0

package recovery

import (
	"reflect"
	"testing"
)

func TestParseModesSplitsNamesFromManagerFlags(t *testing.T) {
	modes, err := parseModes(" watch=--watch-works=true ; backoff=--watch-works=false --kube-api-qps=50;")
	if err != nil {
		t.Fatal(err)
	}
	want := []mode{{Name: "watch", Args: []string{"--watch-works=true"}},
		{Name: "backoff", Args: []string{"--watch-works=false", "--kube-api-qps=50"}}}
	if !reflect.DeepEqual(modes, want) {
		t.Errorf("parseModes = %+v, want %+v", modes, want)
	}
	if _, err := parseModes("=--watch-works=true"); err == nil {
		t.Error("a mode without a name parsed")
	}
}
