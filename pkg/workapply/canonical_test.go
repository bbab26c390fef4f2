// SPDX-License-Identifier: Apache-2.0

package workapply

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// Whatever alreadyCanonical vouches for, canonicalJSON must give back byte for byte:
// the ledger hashes raw as it is in place of re-encoding it.
func checkSound(t *testing.T, raw []byte) bool {
	t.Helper()
	if !alreadyCanonical(raw) {
		return false
	}
	canonical, ok := canonicalJSON(raw)
	if !ok || !bytes.Equal(canonical, raw) {
		t.Fatalf("alreadyCanonical(%s) is true, but canonicalJSON gives %s (ok %v)", raw, canonical, ok)
	}
	return true
}

func TestAlreadyCanonicalVouchesOnlyForWhatCanonicalJSONKeeps(t *testing.T) {
	for _, c := range []struct {
		raw  string
		want bool
	}{
		{`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"labels":{"app":"nginx"},"name":"nginx"},"spec":{"replicas":3,"template":{"spec":{"containers":[{"image":"nginx:1.27","name":"nginx"}]}}}}`, true},
		{`{}`, true},
		{`[]`, true},
		{`[1,-0.5,2e10,1E-3,true,false,null,"x",{},[]]`, true},
		{`{"a":1.0}`, true}, // numbers as written
		{`{"b":1,"a":2}`, false},
		{`{"a":1,"a":2}`, false},
		{`{"a": 1}`, false},
		{` {"a":1}`, false},
		{`{"a":1}` + "\n", false},
		{`{"a":1}{}`, false},
		{`{"a":"x\"y"}`, false},
		{`{"a":"<b>"}`, false},
		{`{"a":"é"}`, false},
		{`{"a":01}`, false},
		{`{"a":1.}`, false},
		{`{"a":-}`, false},
		{`{"a":1e}`, false},
		{`{"a":tru}`, false},
		{`{"a":1,}`, false},
		{`[1,]`, false},
		{`{"a"}`, false},
		{`{"a":1`, false},
		{`"unterminated`, false},
		{``, false},
	} {
		if got := alreadyCanonical([]byte(c.raw)); got != c.want {
			t.Errorf("alreadyCanonical(%q) = %v, want %v", c.raw, got, c.want)
		}
		checkSound(t, []byte(c.raw))
	}
}

// Random values as Go's encoder writes them (what the API server hands back) are taken
// as they are unless a string needs escaping; each of their variants is either vouched
// for soundly or left to canonicalJSON.
func TestAlreadyCanonicalOnRandomDocuments(t *testing.T) {
	rnd := rand.New(rand.NewSource(1))
	alphabet := []string{"a", "b", "Z", "0", "-", ".", "/", " ", ":", "\"", "\\", "<", "&", "é", "\u2028", "\n"}
	word := func(plain bool) string {
		var b strings.Builder
		for n := rnd.Intn(6); n >= 0; n-- {
			if plain {
				b.WriteString(alphabet[rnd.Intn(9)])
			} else {
				b.WriteString(alphabet[rnd.Intn(len(alphabet))])
			}
		}
		return b.String()
	}
	var value func(depth int, plain bool) any
	value = func(depth int, plain bool) any {
		switch k := rnd.Intn(7); {
		case depth > 3 || k == 0:
			return json.Number(fmt.Sprint([]string{"0", "-12", "3.25", "1e+21", "7E-2"}[rnd.Intn(5)]))
		case k == 1:
			return word(plain)
		case k == 2:
			return rnd.Intn(2) == 0
		case k == 3:
			return nil
		case k == 4:
			var a []any
			for n := rnd.Intn(4); n > 0; n-- {
				a = append(a, value(depth+1, plain))
			}
			return a
		default:
			m := map[string]any{}
			for n := rnd.Intn(5); n > 0; n-- {
				m[word(plain)] = value(depth+1, plain)
			}
			return m
		}
	}
	vouched := 0
	for i := 0; i < 3000; i++ {
		plain := i%2 == 0
		raw, err := json.Marshal(value(0, plain))
		if err != nil {
			t.Fatal(err)
		}
		if checkSound(t, raw) {
			vouched++
		} else if plain {
			t.Fatalf("alreadyCanonical(%s) = false for a document of plain strings as Go's encoder writes it", raw)
		}
		var indented bytes.Buffer
		_ = json.Indent(&indented, raw, "", " ")
		checkSound(t, indented.Bytes())
		swapped := bytes.Replace(raw, []byte(`","`), []byte(`" , "`), 1)
		checkSound(t, swapped)
	}
	if vouched < 1500 {
		t.Fatalf("only %d of 3000 documents taken as they are, want at least the 1500 plain ones", vouched)
	}
}

func FuzzAlreadyCanonicalIsSound(f *testing.F) {
	for _, seed := range []string{`{"a":[1,{"b":null}],"c":"d"}`, `{"b":1,"a":2}`, `[0.5e3,-1]`, `"x"`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) { checkSound(t, raw) })
}

func TestAlreadyCanonicalDoesNotAllocate(t *testing.T) {
	raw := []byte(`{"a":[1,-2.5e3,true,false,null],"b":{"c":"d"}}`)
	if n := testing.AllocsPerRun(100, func() { alreadyCanonical(raw) }); n != 0 {
		t.Fatalf("alreadyCanonical allocates %.0f times per call, want 0", n)
	}
}
