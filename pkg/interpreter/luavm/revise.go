// SPDX-License-Identifier: Apache-2.0

package luavm

import (
	"context"
	"fmt"

	lua "github.com/yuin/gopher-lua"
)

// ReviseReplica calls the script's ReviseReplica(desiredObj, desiredReplica) and returns
// the object it returns, built afresh from the script's result. Empty objects and arrays
// of the result are those of obj.
func (p *Pool) ReviseReplica(ctx context.Context, script string, obj map[string]any, replicas int64) (map[string]any, error) {
	v, err := p.call(ctx, script, "ReviseReplica", []any{obj, replicas}, func(ret lua.LValue) (any, error) {
		t, ok := ret.(*lua.LTable)
		if !ok {
			return nil, fmt.Errorf("ReviseReplica returned %s, want the revised object (a table)", ret.Type())
		}
		v, err := fromLua(t, newShapes(obj))
		if err != nil {
			return nil, fmt.Errorf("reading the object ReviseReplica returned: %w", err)
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("ReviseReplica returned an array, want the revised object")
		}
		return m, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(map[string]any), nil
}
