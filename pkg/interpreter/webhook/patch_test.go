// SPDX-License-Identifier: Apache-2.0

package webhook

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// A 1 KB answer of copies of a path onto itself doubles the object with each operation:
// unbounded, 25 of them took tens of seconds and GiBs. The copies are bounded, and so is
// the object a patch makes.
func TestPatchGrowthIsBounded(t *testing.T) {
	object := []byte(`{"apiVersion":"example.io/v1","kind":"Thing","spec":{"a":"` + strings.Repeat("x", 1024) + `"}}`)
	var ops []map[string]any
	ops = append(ops, map[string]any{"op": "add", "path": "/spec/b", "value": []any{}})
	for range 25 {
		ops = append(ops, map[string]any{"op": "copy", "from": "/spec", "path": "/spec/b/-"})
	}
	doubling, _ := json.Marshal(ops)
	big, _ := json.Marshal([]map[string]any{{"op": "add", "path": "/spec/big", "value": strings.Repeat("y", maxPatchedBytes)}})

	for name, tt := range map[string]struct {
		patch []byte
		want  string
	}{
		"copies": {doubling, "the webhook's patch copies more than 16777216 bytes"},
		"adds":   {big, "the webhook's patch makes the object"},
	} {
		start := time.Now()
		_, err := applyPatch(object, &Response{Patch: tt.patch})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want one containing %q", name, err, tt.want)
		}
		t.Logf("%s: refused in %s", name, time.Since(start))
	}

	// An ordinary patch still applies.
	ok, _ := json.Marshal([]map[string]any{{"op": "copy", "from": "/spec/a", "path": "/spec/c"}})
	out, err := applyPatch(object, &Response{Patch: ok})
	if err != nil || out.Object["spec"].(map[string]any)["c"] == nil {
		t.Fatalf("an ordinary copy: %v", err)
	}
}
