package kafka_test

// Regression tests for bugs found while writing kafka_test.go.

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"handoff/internal/kafka"
)

// Regression: kafka-go's Client answers Metadata requests from its transport's
// cached cluster metadata (refreshed every MetadataTTL, 6s by default, and
// shared by every Client of the process that uses the default transport for
// the same brokers). A topic created after the cache was filled is reported
// as not existing — wrapped in ErrTopicNotFound, which the activities turn
// into the non-retryable TopicNotFound — until the next refresh (observed:
// 0.5-6s). Fetch fails the same way ("topic not found"); Bounds does not.
func TestPartitionsSeesTopicCreatedLater(t *testing.T) {
	t.Parallel()
	b, c := fixture(t)
	ctx := ctxT(t)
	_, err := c.Partitions(ctx, topic) // fills the metadata cache
	require.NoError(t, err)

	require.NoError(t, b.CreateTopic(ctx, "later", 2))
	ps, err := c.Partitions(ctx, "later")
	assert.NoError(t, err)
	assert.Equal(t, []int32{0, 1}, ps)

	// A fresh Client shares the default transport and its cache.
	c2, err := kafka.New(b.Addrs())
	require.NoError(t, err)
	ps, err = c2.Partitions(ctx, "later")
	assert.NoError(t, err)
	assert.Equal(t, []int32{0, 1}, ps)

	earliest, latest, err := c.Bounds(ctx, "later", []int32{0, 1}, kafka.ReadUncommitted)
	assert.NoError(t, err)
	assert.Equal(t, map[int32]int64{0: 0, 1: 0}, earliest)
	assert.Equal(t, map[int32]int64{0: 0, 1: 0}, latest)

	res, err := c.Fetch(ctx, kafka.FetchRequest{Topic: "later", Partition: 0, Offset: 0, MaxBytes: 1 << 20, MaxWait: 100 * time.Millisecond})
	assert.NoError(t, err)
	assert.Empty(t, res.Records)
}
