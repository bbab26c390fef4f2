// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/binding-controller/binding-controller/internal/testenv/selfsigned"
)

// startWebhook serves the interpreter webhook both controllers call over HTTPS, with a
// CA of its own; each path of webhookAnswers answers ReviseReplica its way:
//   - /replicas sets spec.replicas (a patch that fails where the object has none);
//   - /double-parallelism sets spec.parallelism to twice the replicas;
//   - /refuse answers successful: false.
func startWebhook() (srv *httptest.Server, caBundle []byte, err error) {
	ca, err := selfsigned.NewCA()
	if err != nil {
		return nil, nil, err
	}
	srv, err = ca.StartServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var in struct {
			Request struct {
				UID      string `json:"uid"`
				Replicas int32  `json:"replicas"`
			} `json:"request"`
		}
		_ = json.Unmarshal(raw, &in)
		req := in.Request
		response := map[string]any{"uid": req.UID, "successful": true, "patchType": "JSONPatch"}
		var patch []map[string]any
		switch r.URL.Path {
		case "/replicas":
			patch = []map[string]any{{"op": "replace", "path": "/spec/replicas", "value": req.Replicas}}
		case "/double-parallelism":
			patch = []map[string]any{{"op": "add", "path": "/spec/parallelism", "value": 2 * req.Replicas}}
		default:
			response = map[string]any{"uid": req.UID, "successful": false, "status": map[string]any{"code": 503, "message": "refused by the fuzzer"}}
		}
		if patch != nil {
			response["patch"], _ = json.Marshal(patch)
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"apiVersion": "config.karmada.io/v1alpha1", "kind": "ResourceInterpreterContext", "response": response})
	}))
	if err != nil {
		return nil, nil, err
	}
	return srv, ca.PEM, nil
}
