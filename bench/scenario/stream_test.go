// SPDX-License-Identifier: Apache-2.0

package scenario

import (
	"strings"
	"testing"
)

// The initial events end at the bookmark that says so, not at an ordinary bookmark;
// decoded, every object must be a ResourceBinding; a stream that ends first is an error.
func TestReadInitialEventsStopsAtTheirEnd(t *testing.T) {
	binding := `{"type":"ADDED","object":{"apiVersion":"work.karmada.io/v1alpha2","kind":"ResourceBinding","metadata":{"name":"b%d","namespace":"bench"},"spec":{"resource":{"apiVersion":"apps/v1","kind":"Deployment","name":"d"}}}}` + "\n"
	bookmark := `{"type":"BOOKMARK","object":{"apiVersion":"work.karmada.io/v1alpha2","kind":"ResourceBinding","metadata":{"resourceVersion":"7"}}}` + "\n"
	end := `{"type":"BOOKMARK","object":{"apiVersion":"work.karmada.io/v1alpha2","kind":"ResourceBinding","metadata":{"resourceVersion":"9","annotations":{"k8s.io/initial-events-end":"true"}}}}` + "\n"
	stream := strings.Replace(binding, "%d", "1", 1) + bookmark + strings.Replace(binding, "%d", "2", 1) + end + strings.Replace(binding, "%d", "3", 1)
	for _, decode := range []bool{false, true} {
		n, size, err := readInitialEvents(strings.NewReader(stream), decode) // "%d" is one byte longer than "3"
		if want := len(stream) - len(binding) + 1; err != nil || n != 2 || size != int64(want) {
			t.Errorf("decode %v: %d bindings, %d bytes, %v; want 2, %d, no error", decode, n, size, err, want)
		}
	}
	cut := strings.Replace(binding, "%d", "1", 1) + bookmark
	if n, _, err := readInitialEvents(strings.NewReader(cut), false); err == nil || n != 1 {
		t.Errorf("a stream cut before the end: %d bindings, %v; want 1 and an error", n, err)
	}
	bad := strings.Replace(binding, `"name":"b%d",`, "", 1) + end
	if _, _, err := readInitialEvents(strings.NewReader(bad), true); err == nil {
		t.Error("decoding a binding without a name: no error")
	}
}
