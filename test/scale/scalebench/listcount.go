package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"google.golang.org/protobuf/encoding/protowire"
)

// protobufMagic starts every body Kubernetes' protobuf serializer writes; a runtime.Unknown
// message follows it.
var protobufMagic = []byte{0x6b, 0x38, 0x73, 0x00}

// Field numbers of the messages countPage reads: runtime.Unknown's raw; a list's metadata and
// items; ListMeta's continue.
const (
	unknownRawField   = 2
	listMetadataField = 1
	listItemsField    = 2
	listContinueField = 3
)

// countPage counts the items of a list page and returns its continue token, without decoding
// the items: the harness then allocates little between two timed lists, so that its own garbage
// collector (its heap holds the simulated agents' caches) competes neither with the next list
// nor with the servers for the machine's cores.
func countPage(body []byte, protobuf bool) (items int, cont string, err error) {
	if protobuf {
		return countProtobufPage(body)
	}
	return countJSONPage(body)
}

func countProtobufPage(body []byte) (int, string, error) {
	rest, ok := bytes.CutPrefix(body, protobufMagic)
	if !ok {
		return 0, "", errors.New("not a Kubernetes protobuf body (no k8s magic prefix)")
	}
	var list []byte
	err := eachField(rest, func(num protowire.Number, value []byte) {
		if num == unknownRawField {
			list = value
		}
	})
	if err != nil {
		return 0, "", fmt.Errorf("the protobuf envelope: %w", err)
	}
	if list == nil {
		return 0, "", errors.New("the protobuf envelope holds no object (no raw field)")
	}
	items, cont := 0, ""
	var metaErr error
	err = eachField(list, func(num protowire.Number, value []byte) {
		switch num {
		case listItemsField:
			items++
		case listMetadataField:
			metaErr = eachField(value, func(num protowire.Number, v []byte) {
				if num == listContinueField {
					cont = string(v)
				}
			})
		}
	})
	if err = errors.Join(err, metaErr); err != nil {
		return 0, "", fmt.Errorf("the list: %w", err)
	}
	return items, cont, nil
}

// eachField calls f with the number and bytes of each length-delimited field of message b,
// skipping fields of other wire types.
func eachField(b []byte, f func(protowire.Number, []byte)) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if typ != protowire.BytesType {
			if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
				return protowire.ParseError(n)
			}
			b = b[n:]
			continue
		}
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		f(num, v)
		b = b[n:]
	}
	return nil
}

// countJSONPage reads a JSON list item by item into one reused buffer.
func countJSONPage(body []byte) (int, string, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := expectDelim(dec, '{'); err != nil {
		return 0, "", err
	}
	items, cont := 0, ""
	var skipped json.RawMessage
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return 0, "", err
		}
		switch key {
		case "metadata":
			var meta struct {
				Continue string `json:"continue"`
			}
			err = dec.Decode(&meta)
			cont = meta.Continue
		case "items":
			items, err = countJSONArray(dec, &skipped)
		default:
			err = dec.Decode(&skipped)
		}
		if err != nil {
			return 0, "", fmt.Errorf("the list's %v: %w", key, err)
		}
	}
	return items, cont, nil
}

// countJSONArray counts the values of the array dec is at (null: none), reading each into item.
func countJSONArray(dec *json.Decoder, item *json.RawMessage) (int, error) {
	tok, err := dec.Token()
	switch {
	case err != nil:
		return 0, err
	case tok == nil:
		return 0, nil
	case tok != json.Delim('['):
		return 0, fmt.Errorf("found %v where an array was expected", tok)
	}
	n := 0
	for dec.More() {
		if err := dec.Decode(item); err != nil {
			return n, err
		}
		n++
	}
	return n, expectDelim(dec, ']')
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if errors.Is(err, io.EOF) {
		return fmt.Errorf("the body ended where %q was expected", want)
	}
	if err != nil {
		return err
	}
	if tok != want {
		return fmt.Errorf("found %v where %q was expected", tok, want)
	}
	return nil
}
