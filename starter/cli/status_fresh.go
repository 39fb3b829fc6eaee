package cli

import (
	"context"
	"errors"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"handoff/internal/domain"
	hkafka "handoff/internal/kafka"
	"handoff/internal/lagview"
	"handoff/internal/protocol"
	"handoff/internal/redact"
	"handoff/workflows"
)

// kafkaTimeout bounds reading the latest offsets at ask time; past it the
// status shows the supervisor's.
const kafkaTimeout = 3 * time.Second

// Where a status's latest offsets come from.
const (
	latestFromKafka      = "kafka"      // read when the status was asked
	latestFromSupervisor = "supervisor" // the supervisor's last read
)

// freshStatus is a supervisor's status with its offsets made fresher when
// it was asked: the latest offsets read from Kafka then, the current ones
// the furthest of the supervisor's and those the groups' running consumes
// heartbeat (the supervisor learns of both only now and then), and lag and
// unpublished worked out again from them (internal/lagview).
type freshStatus struct {
	// Time is when the status was asked.
	Time time.Time `json:"time"`
	workflows.SupervisorStatus
	// LatestFrom is "kafka" (latestOffsets read at latestAt) or
	// "supervisor" (its last read, at latestAt when known).
	LatestFrom string `json:"latestFrom"`
	// KafkaError is why Kafka was not read, when it was not.
	KafkaError string `json:"kafkaError,omitempty"`
	// HeartbeatAt is the newest consume heartbeat whose offsets were read
	// into currentOffsets (zero: none, they are the supervisor's).
	HeartbeatAt time.Time `json:"heartbeatAt,omitzero"`
}

// kafkaLatest reads a supervisor's latest offsets (the next offset of each
// partition) as the worker's Discover and Watch do.
type kafkaLatest struct {
	c     *hkafka.Client
	where string
	err   error // why there is no client
}

func (k *kafkaLatest) latest(ctx context.Context, io domain.IOConfig) (domain.Offsets, error) {
	if k.err != nil {
		return nil, k.err
	}
	ctx, cancel := context.WithTimeout(ctx, kafkaTimeout)
	defer cancel()
	_, _, latest, err := k.c.Look(ctx, io)
	return latest, err
}

func (k *kafkaLatest) close() {
	if k.c != nil {
		k.c.Close()
	}
}

// kafkaFor reads from the brokers with the environment's TLS and SASL. It
// makes no connection; a setting that cannot work is kept as the reason
// the latest offsets are the supervisor's.
func (a *app) kafkaFor(brokers []string) *kafkaLatest {
	seeds := cleanBrokers(brokers)
	k := &kafkaLatest{where: brokersText(seeds)}
	if len(seeds) == 0 {
		k.err = errors.New("no brokers: set --brokers or KAFKA_BROKERS")
		return k
	}
	sec, err := hkafka.SecurityFromEnv(a.io.Getenv)
	if err == nil {
		k.c, err = hkafka.New(seeds, hkafka.WithSecurity(sec))
	}
	k.err = err
	return k
}

// freshen makes st's offsets fresher, as far as Kafka and Temporal answer:
// what does not answer leaves the supervisor's figures.
func freshen(ctx context.Context, c client.Client, k *kafkaLatest, st workflows.SupervisorStatus, now time.Time) freshStatus {
	f := freshStatus{Time: now, SupervisorStatus: st, LatestFrom: latestFromSupervisor}
	beats, beatAt := consumeHeartbeats(ctx, c, st.Groups)
	f.HeartbeatAt = beatAt
	current := lagview.Furthest(st.Current, beats)
	latest, latestAt := st.Latest, st.LatestAt
	if l, err := k.latest(ctx, statusSource(st)); err == nil {
		latest, latestAt, f.LatestFrom = l, now, latestFromKafka
	} else {
		f.KafkaError = redact.Error(err).Error()
	}
	var starts []domain.Offsets
	for _, g := range st.Groups {
		for _, q := range g.Sequences {
			starts = append(starts, q.Start)
		}
	}
	v := lagview.Compute(lagview.Input{
		Committed: lagview.Base(st.Committed, starts...), Current: current, Latest: latest, LatestAt: latestAt,
	})
	s := &f.SupervisorStatus
	s.Current, s.Latest = lagview.Overlay(current, v.Current()), lagview.Overlay(latest, v.Latest())
	s.LatestAt, s.LatestRaised = latestAt, v.Raised()
	s.PartitionLag, s.Lag = v.Lags(), v.Lag
	s.PartitionUnpublished, s.Unpublished = v.UnpublishedByPartition(), v.Unpublished
	return f
}

// consumeHeartbeats are the read positions the groups' running consumes
// last heartbeat (their details' "offsets"), with the newest heartbeat's
// time. A group that cannot be described adds nothing.
func consumeHeartbeats(ctx context.Context, c client.Client, groups []workflows.GroupStatus) (domain.Offsets, time.Time) {
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	var reports []domain.Offsets
	var newest time.Time
	for _, g := range groups {
		d, err := c.DescribeWorkflowExecution(ctx, g.WorkflowID, "")
		if err != nil {
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				break
			}
			continue
		}
		for _, pa := range d.GetPendingActivities() {
			switch pa.GetActivityType().GetName() {
			case protocol.ActivityConsume, protocol.ActivityConsumeStream:
			default:
				continue
			}
			var beat struct {
				State   string         `json:"state"`
				Offsets domain.Offsets `json:"offsets"`
			}
			if pa.GetHeartbeatDetails() == nil ||
				converter.GetDefaultDataConverter().FromPayloads(pa.GetHeartbeatDetails(), &beat) != nil || len(beat.Offsets) == 0 {
				continue
			}
			reports = append(reports, beat.Offsets)
			if t := pa.GetLastHeartbeatTime().AsTime(); pa.GetLastHeartbeatTime() != nil && t.After(newest) {
				newest = t
			}
		}
	}
	return lagview.Furthest(reports...), newest
}

// statusSource is what the supervisor reads, from its spec or, for a
// status without one, its topic.
func statusSource(st workflows.SupervisorStatus) domain.IOConfig {
	io := st.Spec.IOConfig
	if io.Topic == "" && !io.MultiTopic() {
		io.Topic = st.Topic
	}
	return io
}
