package activities_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.temporal.io/sdk/testsuite"

	"handoff/activities"
	"handoff/internal/kafka"
	"handoff/internal/kafkadev"
	"handoff/internal/pgstore"
	"handoff/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// topic is the fixture topic; counts is how many records each of its
// partitions holds.
const topic = "t"

var counts = map[int32]int{0: 5, 1: 3}

// fixture returns activities over a fresh database and a broker holding
// counts records in topic, and an activity environment that runs them under
// their registered names.
func fixture(t *testing.T) (*activities.Activities, *testsuite.TestActivityEnvironment) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()

	pool, err := pgxpool.New(ctx, testenv.Postgres(t))
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	store := pgstore.New(pool)
	require.NoError(t, store.Migrate(ctx))

	b, err := kafkadev.Start(ctx, "127.0.0.1:0", map[string]int32{topic: int32(len(counts))})
	require.NoError(t, err)
	t.Cleanup(b.Close)
	produce(t, ctx, b.Addrs())
	kc, err := kafka.New(b.Addrs())
	require.NoError(t, err)

	acts := &activities.Activities{Kafka: kc, Store: store, Log: slog.New(slog.DiscardHandler)}
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	acts.Register(env)
	return acts, env
}

func produce(t *testing.T, ctx context.Context, addrs []string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	require.NoError(t, err)
	defer cl.Close()
	for p, n := range counts {
		for i := range n {
			rec := &kgo.Record{Topic: topic, Partition: p, Value: fmt.Appendf(nil, "v%d-%d", p, i)}
			require.NoError(t, cl.ProduceSync(ctx, rec).FirstErr())
		}
	}
}
