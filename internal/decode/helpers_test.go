package decode

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/sr"
	"github.com/twmb/franz-go/pkg/sr/srfake"

	"handoff/internal/registry"
)

// collect is a Sink that keeps what it is given, rendered as
// "name=kind:text" lines.
type collect struct {
	fields []string
	want   func(string) bool
}

func (c *collect) Column(name string) (int, bool) { return 0, c.want == nil || c.want(name) }
func (c *collect) Field(_ int, name string, v Value) error {
	c.fields = append(c.fields, fmt.Sprintf("%s=%s:%s", name, kindName(v.Kind), strings.Clone(v.Text)))
	return nil
}
func (c *collect) Scalar(v Value) error {
	c.fields = append(c.fields, fmt.Sprintf("=%s:%s", kindName(v.Kind), strings.Clone(v.Text)))
	return nil
}

func kindName(k Kind) string {
	return map[Kind]string{Null: "null", String: "string", Number: "number", Bool: "bool", Object: "object", Array: "array", Time: "time"}[k]
}

// newRegistry starts srfake and a client of it (not shared: each test
// its own registry).
func newRegistry(t *testing.T) (*srfake.Registry, *registry.Client) {
	t.Helper()
	reg := srfake.New()
	t.Cleanup(reg.Close)
	c, err := registry.Open(registry.Config{URLs: []string{reg.URL()}})
	require.NoError(t, err)
	return reg, c
}

// frame encodes v with enc in the Confluent wire format through franz-go's
// serde functions (the producers' side, not this package's).
func frame(t *testing.T, id int, index []int, v any, enc func(any) ([]byte, error)) []byte {
	t.Helper()
	b, err := sr.Encode(v, &sr.ConfluentHeader{}, id, index, enc)
	require.NoError(t, err)
	return b
}

func itoa(n int) string { return fmt.Sprint(n) }

func errorsAs(err error, target any) bool { return errors.As(err, target) }
