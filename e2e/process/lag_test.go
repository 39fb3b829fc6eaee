package process

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	sdkpb "go.temporal.io/api/sdk/v1"

	"handoff/internal/domain"
	"handoff/internal/eventgen"
	"handoff/starter/cli"
	"handoff/workflows"
)

// lagFigures are one reader's lag (latest − current) and unpublished
// (current − committed) records, summed over the partitions.
type lagFigures struct {
	lag, unpublished int64
	hasUnpublished   bool
}

// Issue 13: starter status, the worker's /metrics and the supervisor's
// current details in the Temporal UI give the same figures for the same
// moment: once the groups have read everything produced (nothing is
// checkpointed, so it is all unpublished), lag is 0 everywhere and the
// unpublished records are the same number everywhere.
func TestStatusMetricsAndDetailsAgreeOnLag(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 4)
	spec := e.spec(2)
	gen := eventgen.New(e.name, 53)
	w := e.startWorker("a")
	require.NoError(t, e.produce(gen, 3000, 0))
	run := e.startSupervisor(spec)
	e.waitCaughtUp(spec, time.Minute)

	var last string
	var metF lagFigures
	deadline := time.Now().Add(time.Minute)
	for {
		cliF, cliErr := e.cliLag(spec)
		m, mErr := scrape(w)
		detF, detErr := e.detailsLag(spec)
		metF = lagFigures{}
		var hasLag bool
		if mErr == nil {
			var v float64
			v, hasLag = m.sum("handoff_lag", e.name)
			metF.lag = int64(v)
			v, metF.hasUnpublished = m.sum("handoff_unpublished", e.name)
			metF.unpublished = int64(v)
		}
		last = fmt.Sprintf("status %+v (%v); /metrics %+v, handoff_lag there: %v (%v); details %+v (%v)", cliF, cliErr, metF, hasLag, mErr, detF, detErr)
		agree := cliErr == nil && mErr == nil && detErr == nil && hasLag &&
			cliF.lag == 0 && metF.lag == 0 && detF.lag == 0 &&
			cliF.unpublished > 0 && cliF.unpublished == detF.unpublished &&
			metF.hasUnpublished && metF.unpublished == cliF.unpublished
		if agree {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the three never agreed within a minute of catching up; last: %s", last)
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Logf("agreed: %s", last)
	e.stopAndWait(spec, run, 2*time.Minute)
}

// cliLag runs `starter status ID -o json` in-process against the test's
// Temporal and Kafka.
func (e *env) cliLag(spec domain.Spec) (lagFigures, error) {
	var out, errOut bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	code := cli.Run(ctx, []string{"status", spec.ID, "-o", "json",
		"--address", e.hostPort, "--namespace", e.ns, "--brokers", strings.Join(e.brokers, ",")},
		cli.IO{Stdout: &out, Stderr: &errOut})
	if code != cli.ExitOK {
		return lagFigures{}, fmt.Errorf("starter status: exit %d: %s", code, errOut.String())
	}
	var st struct {
		Lag         int64  `json:"aggregateLag"`
		Unpublished int64  `json:"aggregateUnpublished"`
		LatestFrom  string `json:"latestFrom"`
		KafkaError  string `json:"kafkaError"`
	}
	if err := json.Unmarshal(out.Bytes(), &st); err != nil {
		return lagFigures{}, err
	}
	if st.LatestFrom != "kafka" {
		return lagFigures{}, fmt.Errorf("starter status did not read Kafka: %s", st.KafkaError)
	}
	return lagFigures{lag: st.Lag, unpublished: st.Unpublished, hasUnpublished: true}, nil
}

var detailsFigures = regexp.MustCompile(`lag (\d+) · unpublished (\d+)`)

// detailsLag reads the figures of the supervisor's current details, as
// the Temporal UI does (the SDK's metadata query).
func (e *env) detailsLag(spec domain.Spec) (lagFigures, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	v, err := e.temporal.QueryWorkflow(ctx, workflows.SupervisorWorkflowID(spec.ID), "", "__temporal_workflow_metadata")
	if err != nil {
		return lagFigures{}, err
	}
	var md sdkpb.WorkflowMetadata
	if err := v.Get(&md); err != nil {
		return lagFigures{}, err
	}
	m := detailsFigures.FindStringSubmatch(md.GetCurrentDetails())
	if m == nil {
		return lagFigures{}, fmt.Errorf("no lag in the details %q", md.GetCurrentDetails())
	}
	lag, _ := strconv.ParseInt(m[1], 10, 64)
	unpublished, _ := strconv.ParseInt(m[2], 10, 64)
	return lagFigures{lag: lag, unpublished: unpublished, hasUnpublished: true}, nil
}
