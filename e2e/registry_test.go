package e2e

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/bufbuild/protocompile"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/sr"
	"github.com/twmb/franz-go/pkg/sr/srfake"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"handoff/internal/domain"
	"handoff/internal/eventgen"
)

// registry is srfake, the in-process Confluent Schema Registry, served on
// an address the test keeps, so that it can be stopped (connections
// refused) and started again on the same address with the same schemas.
type registry struct {
	t    *testing.T
	reg  *srfake.Registry
	addr string
	srv  *http.Server
}

func startRegistry(t *testing.T) *registry {
	t.Helper()
	r := &registry{t: t, reg: srfake.NewRegistry()}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	r.addr = ln.Addr().String()
	r.serve(ln)
	t.Cleanup(r.stop)
	return r
}

func (r *registry) serve(ln net.Listener) {
	r.srv = &http.Server{Handler: r.reg.Handler(), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = r.srv.Serve(ln) }()
}

func (r *registry) url() string { return "http://" + r.addr }

// stop closes the listener and every connection: the registry is down.
func (r *registry) stop() {
	if r.srv != nil {
		_ = r.srv.Close()
		r.srv = nil
	}
}

// start serves again on the same address.
func (r *registry) start() {
	r.t.Helper()
	var ln net.Listener
	require.Eventually(r.t, func() bool {
		var err error
		ln, err = net.Listen("tcp", r.addr)
		return err == nil
	}, 10*time.Second, 50*time.Millisecond, "listen on %s again", r.addr)
	r.serve(ln)
}

func (r *registry) register(subject string, s sr.Schema) int {
	r.t.Helper()
	id, _, err := r.reg.RegisterSchema(subject, s)
	require.NoError(r.t, err)
	return id
}

// decoder is a schema_registry bytes decoder of this registry.
func (r *registry) decoder() *domain.BytesDecoder {
	return &domain.BytesDecoder{Type: domain.DecoderSchemaRegistry, URL: r.url()}
}

// avroEvents are events from..from+n-1 of gen, framed with schema id.
func avroEvents(t *testing.T, gen *eventgen.Generator, id int, from, n int64) [][]byte {
	t.Helper()
	msgs := make([][]byte, 0, n)
	for i := from; i < from+n; i++ {
		b, err := gen.AvroEvent(i, id)
		require.NoError(t, err)
		msgs = append(msgs, b)
	}
	return msgs
}

// requireNoUnparseable checks the supervisor counted nothing unparseable
// and saved no parse error.
func (s *stack) requireNoUnparseable(spec domain.Spec) {
	s.t.Helper()
	var n int
	require.NoError(s.t, s.store.Pool().QueryRow(context.Background(),
		`SELECT count(*) FROM parse_errors WHERE datasource = $1`, spec.DataSchema.DataSource).Scan(&n))
	require.Zero(s.t, n, "parse errors saved")
}

// protoDescriptor compiles a .proto text with protocompile, as a
// producer's build would, and returns the named message.
func protoDescriptor(t *testing.T, schema, name string) protoreflect.MessageDescriptor {
	t.Helper()
	c := protocompile.Compiler{Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{
		Accessor: func(p string) (io.ReadCloser, error) {
			if p == "event.proto" {
				return io.NopCloser(strings.NewReader(schema)), nil
			}
			return nil, os.ErrNotExist
		},
	})}
	files, err := c.Compile(context.Background(), "event.proto")
	require.NoError(t, err)
	md, ok := files[0].FindDescriptorByName(protoreflect.FullName(name)).(protoreflect.MessageDescriptor)
	require.True(t, ok, name)
	return md
}

// protoEvent is a JSON event as a dynamicpb message of md, framed with
// schema id and message index [1] by franz-go's serde functions.
func protoEvent(t *testing.T, md protoreflect.MessageDescriptor, js []byte, id int) []byte {
	t.Helper()
	m := dynamicpb.NewMessage(md)
	require.NoError(t, protojson.Unmarshal(js, m))
	b, err := sr.Encode(m, &sr.ConfluentHeader{}, id, []int{1}, func(v any) ([]byte, error) { return proto.Marshal(v.(proto.Message)) })
	require.NoError(t, err)
	return b
}
