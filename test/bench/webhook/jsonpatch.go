package webhook

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// Operation is one RFC 6902 JSON Patch operation.
type Operation struct {
	Op    string
	Path  string
	Value any
}

// MarshalJSON writes the value for add and replace even when it is null.
func (o Operation) MarshalJSON() ([]byte, error) {
	if o.Op == "remove" {
		return json.Marshal(struct {
			Op   string `json:"op"`
			Path string `json:"path"`
		}{o.Op, o.Path})
	}
	return json.Marshal(struct {
		Op    string `json:"op"`
		Path  string `json:"path"`
		Value any    `json:"value"`
	}{o.Op, o.Path, o.Value})
}

// Diff returns the operations that turn from into to, both JSON documents decoded into
// map[string]any, []any and scalars. Objects are compared member by member; lists of equal
// length element by element; anything else that differs is replaced whole.
func Diff(from, to any) []Operation {
	var ops []Operation
	diff("", from, to, &ops)
	return ops
}

func diff(path string, from, to any, ops *[]Operation) {
	if reflect.DeepEqual(from, to) {
		return
	}
	switch f := from.(type) {
	case map[string]any:
		t, ok := to.(map[string]any)
		if !ok {
			break
		}
		for _, k := range sortedKeys(f) {
			if _, keep := t[k]; !keep {
				*ops = append(*ops, Operation{Op: "remove", Path: path + "/" + escape(k)})
			}
		}
		for _, k := range sortedKeys(t) {
			if old, had := f[k]; had {
				diff(path+"/"+escape(k), old, t[k], ops)
			} else {
				*ops = append(*ops, Operation{Op: "add", Path: path + "/" + escape(k), Value: t[k]})
			}
		}
		return
	case []any:
		t, ok := to.([]any)
		if !ok || len(t) != len(f) {
			break
		}
		for i := range f {
			diff(path+"/"+strconv.Itoa(i), f[i], t[i], ops)
		}
		return
	}
	*ops = append(*ops, Operation{Op: "replace", Path: path, Value: to})
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// escape escapes a member name for a JSON Pointer (RFC 6901).
func escape(s string) string { return strings.NewReplacer("~", "~0", "/", "~1").Replace(s) }

// decodeJSON decodes a document keeping numbers exact (json.Number), so integers survive the
// round trip through a patch unchanged.
func decodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

// toJSONValue is v as a decoded JSON document.
func toJSONValue(v any) (any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return decodeJSON(data)
}
