// Command testgrid-proto converts between JSON and the protocol buffers TestGrid keeps in its bucket, with
// TestGrid's own generated types: `config` reads a Configuration as JSON on stdin and writes it validated and
// wire-encoded (what the updater, tabulator and summarizer read from --config); `summary` reads a wire-encoded
// DashboardSummary on stdin (what the summarizer writes) and writes it as JSON.
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/GoogleCloudPlatform/testgrid/config"
	configpb "github.com/GoogleCloudPlatform/testgrid/pb/config"
	summarypb "github.com/GoogleCloudPlatform/testgrid/pb/summary"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

func main() {
	if len(os.Args) != 2 {
		fail(fmt.Errorf("usage: %s config|summary < input > output", os.Args[0]))
	}
	input, err := io.ReadAll(os.Stdin)
	if err != nil {
		fail(err)
	}
	var output []byte
	switch os.Args[1] {
	case "config":
		var cfg configpb.Configuration
		if err = protojson.Unmarshal(input, &cfg); err == nil {
			output, err = config.MarshalBytes(&cfg)
		}
	case "summary":
		var sum summarypb.DashboardSummary
		if err = proto.Unmarshal(input, &sum); err == nil {
			output, err = protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true}.Marshal(&sum)
		}
	default:
		err = fmt.Errorf("unknown mode %q: config or summary", os.Args[1])
	}
	if err != nil {
		fail(err)
	}
	if _, err := os.Stdout.Write(output); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "testgrid-proto: %v\n", err)
	os.Exit(1)
}
