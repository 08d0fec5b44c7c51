package webhook

import (
	"encoding/json"
	"reflect"
	"testing"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
)

func TestDiff(t *testing.T) {
	cases := []struct{ name, from, to string }{
		{"equal", `{"a":1}`, `{"a":1}`},
		{"add, remove, replace", `{"a":1,"b":{"c":"x"},"gone":true}`, `{"a":2,"b":{"c":"x","d":[1]},"new":null}`},
		{"escaped names", `{"metadata":{"labels":{"a/b":"1","t~":"2"}}}`, `{"metadata":{"labels":{"a/b":"3"}}}`},
		{"lists of equal length", `{"l":[{"n":"a"},{"n":"b"}]}`, `{"l":[{"n":"a","bus":"sata"},{"n":"c"}]}`},
		{"lists of other length", `{"l":[1,2,3]}`, `{"l":[1]}`},
		{"type change", `{"a":{"b":1}}`, `{"a":[1]}`},
		{"big integers stay exact", `{"n":9007199254740993}`, `{"n":9007199254740995}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			from, err := decodeJSON([]byte(c.from))
			if err != nil {
				t.Fatal(err)
			}
			to, err := decodeJSON([]byte(c.to))
			if err != nil {
				t.Fatal(err)
			}
			data, err := json.Marshal(Diff(from, to))
			if err != nil {
				t.Fatal(err)
			}
			p, err := jsonpatch.DecodePatch(data)
			if err != nil {
				t.Fatalf("invalid patch %s: %v", data, err)
			}
			out, err := p.Apply([]byte(c.from))
			if err != nil {
				t.Fatalf("patch %s does not apply: %v", data, err)
			}
			got, _ := decodeJSON(out)
			if !reflect.DeepEqual(got, to) {
				t.Errorf("patch %s turned %s into %s, want %s", data, c.from, out, c.to)
			}
		})
	}
}
