package activities

import (
	"testing"

	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
	"handoff/internal/protocol"
)

// TestWatcherCaughtUp: two looks with everything read and nothing new make
// a watcher caught up; one told it is caught up stays so at its first look
// (it once flipped to not caught up there, and an idle supervisor renewed
// its watch every period); new records or a lagging group end it.
func TestWatcherCaughtUp(t *testing.T) {
	latest, read := domain.Offsets{domain.P(0): 10, domain.P(1): 5}, domain.Offsets{domain.P(0): 10, domain.P(1): 5}
	fresh := newWatcher(nil, protocol.WatchInput{})
	require.False(t, fresh.see(latest, read), "one look is not enough")
	require.True(t, fresh.see(latest, read))

	known := newWatcher(nil, protocol.WatchInput{Known: protocol.WatchView{CaughtUp: true}})
	require.True(t, known.see(latest, read), "a caught-up view holds at the first look")
	require.False(t, known.see(domain.Offsets{domain.P(0): 11, domain.P(1): 5}, read), "a new record")

	lagging := newWatcher(nil, protocol.WatchInput{Known: protocol.WatchView{CaughtUp: true}})
	require.False(t, lagging.see(latest, domain.Offsets{domain.P(0): 9, domain.P(1): 5}), "a group behind")
}
