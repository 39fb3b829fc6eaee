package searchattr_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/types/known/durationpb"

	"handoff/internal/searchattr"
	"handoff/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func dial(t *testing.T) client.Client {
	t.Helper()
	c, err := client.Dial(client.Options{HostPort: testenv.Temporal(t)})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c
}

func keywords(t *testing.T, c client.Client, namespace string) map[string]enums.IndexedValueType {
	t.Helper()
	resp, err := c.OperatorService().ListSearchAttributes(context.Background(),
		&operatorservice.ListSearchAttributesRequest{Namespace: namespace})
	require.NoError(t, err)
	got := map[string]enums.IndexedValueType{}
	for _, n := range searchattr.Names {
		if typ, ok := resp.GetCustomAttributes()[n]; ok {
			got[n] = typ
		}
	}
	return got
}

// newNamespace registers a namespace of the test's own, which has none of
// the attributes.
func newNamespace(t *testing.T) string {
	t.Helper()
	ns := fmt.Sprintf("searchattr-%d", time.Now().UnixNano())
	nsc, err := client.NewNamespaceClient(client.Options{HostPort: testenv.Temporal(t)})
	require.NoError(t, err)
	defer nsc.Close()
	require.NoError(t, nsc.Register(t.Context(), &workflowservice.RegisterNamespaceRequest{
		Namespace: ns, WorkflowExecutionRetentionPeriod: durationpb.New(24 * time.Hour),
	}))
	return ns
}

// eventually retries f: a new namespace takes a moment to reach every
// part of the server.
func eventually(t *testing.T, f func() error) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("still failing after 30s: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func allKeywords() map[string]enums.IndexedValueType {
	want := map[string]enums.IndexedValueType{}
	for _, n := range searchattr.Names {
		want[n] = enums.INDEXED_VALUE_TYPE_KEYWORD
	}
	return want
}

// The test dev server registers them from the start, so on it Ensure has
// nothing to do.
func TestDevServerHasThemAlready(t *testing.T) {
	t.Parallel()
	c := dial(t)
	if os.Getenv("TEMPORAL_ADDRESS") == "" {
		require.Equal(t, allKeywords(), keywords(t, c, "default"))
	}
	for range 2 {
		_, err := searchattr.Ensure(t.Context(), c, "default")
		require.NoError(t, err)
	}
	require.Equal(t, allKeywords(), keywords(t, c, "default"))
}

func TestEnsureAddsWhatIsMissingOnce(t *testing.T) {
	t.Parallel()
	c := dial(t)
	ns := newNamespace(t)

	var added []string
	eventually(t, func() (err error) {
		added, err = searchattr.Ensure(t.Context(), c, ns)
		return err
	})
	require.ElementsMatch(t, searchattr.Names, added)
	require.Equal(t, allKeywords(), keywords(t, c, ns))

	added, err := searchattr.Ensure(t.Context(), c, ns)
	require.NoError(t, err)
	require.Empty(t, added, "a second call adds nothing")
}

func TestEnsureRefusesAnAttributeOfAnotherType(t *testing.T) {
	t.Parallel()
	c := dial(t)
	ns := newNamespace(t)
	eventually(t, func() error {
		_, err := c.OperatorService().AddSearchAttributes(t.Context(), &operatorservice.AddSearchAttributesRequest{
			Namespace: ns, SearchAttributes: map[string]enums.IndexedValueType{searchattr.Names[0]: enums.INDEXED_VALUE_TYPE_INT},
		})
		return err
	})

	_, err := searchattr.Ensure(t.Context(), c, ns)
	require.ErrorContains(t, err, searchattr.Names[0])
	require.ErrorContains(t, err, "want Keyword")
}

func TestDevServerArgs(t *testing.T) {
	t.Parallel()
	require.Equal(t, []string{
		"--search-attribute", "Supervisor=Keyword",
		"--search-attribute", "DataSource=Keyword",
		"--search-attribute", "Topic=Keyword",
		"--search-attribute", "SupervisorState=Keyword",
		"--search-attribute", "CompactionState=Keyword",
	}, searchattr.DevServerArgs())
}
