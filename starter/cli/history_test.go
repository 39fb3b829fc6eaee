package cli

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	workflowpb "go.temporal.io/api/workflow/v1"

	"handoff/internal/pgstore"
	"handoff/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// specsDB is a migrated metadata database holding two versions of the spec
// of supervisor orders.
func specsDB(t *testing.T) string {
	t.Helper()
	url := testenv.Postgres(t)
	pool, err := pgxpool.New(context.Background(), url)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	s := pgstore.New(pool)
	ctx := context.Background()
	require.NoError(t, s.Migrate(ctx))
	for _, spec := range []string{
		`{"id": "orders", "dataSchema": {"dataSource": "orders_ds"}, "ioConfig": {"topic": "orders", "taskCount": 2}}`,
		`{"id": "orders", "dataSchema": {"dataSource": "orders_ds"}, "ioConfig": {"topic": "orders", "taskCount": 4,
		  "consumerProperties": {"isolation.level": "read_uncommitted"}}, "tuningConfig": {"maxRowsPerSegment": 10}}`,
	} {
		_, _, err := s.RecordSpec(ctx, "orders", json.RawMessage(spec))
		require.NoError(t, err)
	}
	_, _, err = s.RecordSpecChange(ctx, "orders", json.RawMessage(`{"id": "orders", "dataSchema": {"dataSource": "orders_ds"}, "ioConfig": {"topic": "orders", "taskCount": 6},
		  "tuningConfig": {"maxRowsPerSegment": 10}}`), pgstore.SpecChange{ChangedBy: pgstore.ChangedByAutoscaler, Reason: "scale out: 4 of 10 lag samples above 1000"})
	require.NoError(t, err)
	return url
}

func TestHistory(t *testing.T) {
	t.Parallel()
	url := specsDB(t)

	r := runCLI(t, runOpts{}, "history", "orders", "--database-url", url)
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Regexp(t, `^VERSION  ACCEPTED              BY          SPEC
1        \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ  user        topic orders → datasource orders_ds, 2 task groups, read_committed
2        \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ  user        topic orders → datasource orders_ds, 4 task groups, read_uncommitted; changed: ioConfig.consumerProperties.isolation.level, ioConfig.taskCount, tuningConfig.maxRowsPerSegment
3        \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ  autoscaler  topic orders → datasource orders_ds, 6 task groups, read_committed; changed: ioConfig.consumerProperties.isolation.level, ioConfig.taskCount; why: scale out: 4 of 10 lag samples above 1000
$`, r.stdout)

	r = runCLI(t, runOpts{env: map[string]string{"DATABASE_URL": url}}, "history", "orders", "-o", "json")
	require.Equal(t, ExitOK, r.code, r.stderr)
	var got []specVersion
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &got))
	require.Len(t, got, 3)
	require.Equal(t, []string{"read_committed", "read_uncommitted", "read_committed"}, []string{got[0].IsolationLevel, got[1].IsolationLevel, got[2].IsolationLevel})
	assert.Equal(t, 2, got[1].Version)
	assert.Equal(t, "user", got[1].ChangedBy)
	assert.Equal(t, "autoscaler", got[2].ChangedBy)
	assert.Equal(t, "scale out: 4 of 10 lag samples above 1000", got[2].Reason)
	assert.False(t, got[1].CreatedAt.IsZero())
	assert.JSONEq(t, `{"id": "orders", "dataSchema": {"dataSource": "orders_ds"}, "ioConfig": {"topic": "orders", "taskCount": 4,
		"consumerProperties": {"isolation.level": "read_uncommitted"}}, "tuningConfig": {"maxRowsPerSegment": 10}}`, string(got[1].Spec))
}

func TestHistoryOfUnknownSupervisorExits3(t *testing.T) {
	t.Parallel()
	url := specsDB(t)
	fc := &fakeClient{listed: []*workflowpb.WorkflowExecutionInfo{runningSupervisor(t, "orders", "RUNNING", "orders_ds", "orders")}}
	r := runCLI(t, runOpts{dial: dialTo(fc, nil)}, "history", "order", "--database-url", url)
	assert.Equal(t, ExitNotFound, r.code, r.stderr)
	assert.Contains(t, r.stderr, `no supervisor "order" (workflow supervisor/order): start it with `+"`starter start -f spec.json`"+`; running supervisors: orders`)
}

func TestChangedFields(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "nothing", changedFields([]byte(`{"a": {"b": 1}}`), []byte(`{ "a": {"b": 1} }`)))
	assert.Equal(t, "a.b, a.c, d", changedFields([]byte(`{"a": {"b": 1, "c": [1]}, "d": true}`), []byte(`{"a": {"b": 2, "c": [1, 2]}}`)))
}
