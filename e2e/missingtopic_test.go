package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"handoff/activities"
	"handoff/internal/eventgen"
	"handoff/workflows"
)

// TestMissingTopicIsReportedAndRecovered starts a supervisor on a topic that
// does not exist: it must say so in its status and keep retrying, and once
// the topic appears it must ingest it exactly once.
func TestMissingTopicIsReportedAndRecovered(t *testing.T) {
	t.Parallel()
	s := newStack(t, 0, activities.Faults{})
	spec := s.spec(1)
	run := s.startSupervisor(spec)

	var st workflows.SupervisorStatus
	require.Eventually(t, func() bool {
		st = s.status(spec)
		return st.State == workflows.StateUnhealthySupervisor && len(st.RecentErrors) > 0
	}, 30*time.Second, 200*time.Millisecond, "status never reported the missing topic")
	last := st.RecentErrors[len(st.RecentErrors)-1].Message
	require.True(t, strings.Contains(last, spec.IOConfig.Topic) && strings.Contains(last, "not found"), "error %q must name the topic", last)

	require.NoError(t, s.broker.CreateTopic(context.Background(), spec.IOConfig.Topic, 2))
	gen := eventgen.New(s.name, 3)
	s.produce(gen, 3000)
	require.Eventually(t, func() bool {
		st := s.status(spec).State
		return st == workflows.StateRunning || st == workflows.StateIdle
	},
		30*time.Second, 200*time.Millisecond, "supervisor did not recover once the topic existed")
	s.waitCaughtUp(spec)
	s.stopAndWait(spec, run)
	s.requireExactlyOnce(spec, gen.RunID, 3000)
}
