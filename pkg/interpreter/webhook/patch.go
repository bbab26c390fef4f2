package webhook

import (
	jsonpatch "github.com/evanphx/json-patch/v5"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// applyPatch applies a verified answer's JSON patch to the object's JSON. An answer with
// no patch leaves the object as it is: the webhook handled it by changing nothing.
func applyPatch(object []byte, res *Response) (*unstructured.Unstructured, error) {
	patched := object
	if len(res.Patch) > 0 {
		patch, err := jsonpatch.DecodePatch(res.Patch)
		if err != nil {
			return nil, err
		}
		if len(patch) > 0 {
			if patched, err = patch.Apply(object); err != nil {
				return nil, err
			}
		}
	}
	out := &unstructured.Unstructured{}
	if err := out.UnmarshalJSON(patched); err != nil {
		return nil, err
	}
	return out, nil
}
