// SPDX-License-Identifier: Apache-2.0

package webhook

import (
	"errors"
	"fmt"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// maxPatchedBytes bounds what a webhook's patch may make of an object: as much as its
// answer may hold. json-patch's own bound on "copy" growth is off by default, and 20
// copies of a path onto itself (a 1 KB answer) would double the object 20 times: 54 MiB
// and 25 s of CPU for one cluster of one binding.
const maxPatchedBytes = maxResponseBytes

// applyPatch applies a verified answer's JSON patch to the object's JSON. An answer with
// no patch leaves the object as it is: the webhook handled it by changing nothing. What
// "copy" operations add, and the patched object, are each bounded by maxPatchedBytes.
func applyPatch(object []byte, res *Response) (*unstructured.Unstructured, error) {
	patched := object
	if len(res.Patch) > 0 {
		patch, err := jsonpatch.DecodePatch(res.Patch)
		if err != nil {
			return nil, err
		}
		if len(patch) > 0 {
			options := jsonpatch.NewApplyOptions()
			options.AccumulatedCopySizeLimit = maxPatchedBytes
			if patched, err = patch.ApplyWithOptions(object, options); err != nil {
				var tooMuch *jsonpatch.AccumulatedCopySizeError
				if errors.As(err, &tooMuch) {
					return nil, fmt.Errorf("the webhook's patch copies more than %d bytes", maxPatchedBytes)
				}
				return nil, err
			}
		}
	}
	if len(patched) > maxPatchedBytes {
		return nil, fmt.Errorf("the webhook's patch makes the object %d bytes, over %d", len(patched), maxPatchedBytes)
	}
	out := &unstructured.Unstructured{}
	if err := out.UnmarshalJSON(patched); err != nil {
		return nil, err
	}
	return out, nil
}
