// SPDX-License-Identifier: Apache-2.0

package luavm

import (
	"fmt"
	"reflect"

	"github.com/yuin/gopher-lua/ast"
)

// Bounds on a script's source, checked before it is compiled: gopher-lua's compiler walks
// the syntax tree recursively and, for nested blocks, in quadratic time (a script of
// 100,000 nested "do" blocks took 8.8 s to compile, outside any call's deadline).
// Karmada's bundled scripts are under 8 KiB and nest under 30 levels.
const (
	maxScriptBytes = 256 << 10
	maxSyntaxDepth = 1000
)

// checkSyntaxDepth fails for a syntax tree deeper than maxSyntaxDepth nodes. It walks the
// tree with its own stack, not by recursion, for the reason it exists.
func checkSyntaxDepth(chunk []ast.Stmt) error {
	type item struct {
		v     reflect.Value
		depth int
	}
	stack := []item{{reflect.ValueOf(chunk), 0}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch it.v.Kind() {
		case reflect.Pointer, reflect.Interface:
			if !it.v.IsNil() {
				stack = append(stack, item{it.v.Elem(), it.depth})
			}
		case reflect.Slice:
			for i := 0; i < it.v.Len(); i++ {
				stack = append(stack, item{it.v.Index(i), it.depth})
			}
		case reflect.Struct:
			if it.depth+1 > maxSyntaxDepth {
				return fmt.Errorf("the script nests deeper than %d levels", maxSyntaxDepth)
			}
			for i := 0; i < it.v.NumField(); i++ {
				stack = append(stack, item{it.v.Field(i), it.depth + 1})
			}
		}
	}
	return nil
}
