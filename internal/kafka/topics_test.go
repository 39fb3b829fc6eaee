package kafka_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"handoff/internal/kafka"
	"handoff/internal/kafkadev"
)

// Topics lists what the brokers hold, and within seconds of a change sees
// a topic created or deleted after the client's first request.
func TestTopicsSeesCreatedAndDeletedTopics(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	b, err := kafkadev.Start(ctx, "127.0.0.1:0", map[string]int32{"orders.eu": 2, "orders.us": 1, "audit": 3})
	require.NoError(t, err)
	t.Cleanup(b.Close)
	c, err := kafka.New(b.Addrs())
	require.NoError(t, err)

	got, err := c.Topics(ctx)
	require.NoError(t, err)
	require.Equal(t, map[string][]int32{"orders.eu": {0, 1}, "orders.us": {0}, "audit": {0, 1, 2}}, got)

	require.NoError(t, b.CreateTopic(ctx, "orders.ap", 2))
	require.NoError(t, b.DeleteTopic(ctx, "orders.us"))
	require.Eventually(t, func() bool {
		got, err = c.Topics(ctx)
		require.NoError(t, err)
		_, created := got["orders.ap"]
		_, deleted := got["orders.us"]
		return created && !deleted
	}, 20*time.Second, 200*time.Millisecond, "last listing %v", got)
	require.Equal(t, map[string][]int32{"orders.eu": {0, 1}, "orders.ap": {0, 1}, "audit": {0, 1, 2}}, got)
}
