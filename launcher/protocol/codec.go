package protocol

import (
	"encoding/json"

	"google.golang.org/grpc/mem"
)

// codec carries the protocol's messages as JSON. It is forced on both ends of every connection
// (never registered globally), so it affects no other gRPC user in the process.
type codec struct{}

func (codec) Name() string { return "json" }

func (codec) Marshal(v any) (mem.BufferSlice, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return mem.BufferSlice{mem.SliceBuffer(data)}, nil
}

func (codec) Unmarshal(data mem.BufferSlice, v any) error {
	return json.Unmarshal(data.Materialize(), v)
}
