package chaos

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"handoff/workflows"
)

// TestKafkaBrokerFrozen freezes the broker with SIGSTOP for 30s (short
// form: 5s) while events are produced and the worker reads and publishes,
// then resumes it with SIGCONT: connections hang rather than fail.
func TestKafkaBrokerFrozen(t *testing.T) {
	t.Parallel()
	freeze := pick(5*time.Second, 30*time.Second)
	addr := kfakeAddr(t)
	k := startKfake(t, addr, topicName(t), 4)
	e := newEnv(t, envOptions{brokers: []string{addr}})
	spec := e.spec(2)
	p := e.producer(105)

	w := e.startWorker("a", true)
	require.NoError(t, p.produce(2000, 0))
	run := e.startSupervisor(spec)
	producing := p.background(int64(freeze/time.Second)*400+4000, 400)
	e.waitPublished(spec, 0, time.Minute)
	on := startedOn(e.startedActivities(spec), w.identityPrefix())
	k.signal(syscall.SIGSTOP)
	t.Logf("SIGSTOP to the broker for %v while the worker ran %v", freeze, on)
	e.report.fault(fmt.Sprintf("kafka-sigstop-%ds", int(freeze/time.Second)))
	time.Sleep(freeze)
	k.signal(syscall.SIGCONT)

	require.NoError(t, <-producing)
	e.waitCaughtUp(spec, 3*time.Minute)
	e.stopAndWait(spec, run, 3*time.Minute)
	e.verify(spec, p.gen.RunID, p.produced())
}

// TestKafkaUnreachableAtSupervisorStart starts the worker and the
// supervisor before the broker: the supervisor must say it cannot reach
// the stream, and ingest everything once the broker is up.
func TestKafkaUnreachableAtSupervisorStart(t *testing.T) {
	t.Parallel()
	addr := kfakeAddr(t)
	e := newEnv(t, envOptions{brokers: []string{addr}})
	spec := e.spec(2)
	p := e.producer(106)

	w := e.startWorker("a", false) // not ready: /readyz asks Kafka
	run := e.startSupervisor(spec)
	e.report.fault("kafka-unreachable-at-start")
	var last workflows.SupervisorStatus
	require.NoError(t, retry(time.Minute, func() (err error) {
		if last, err = e.status(spec); err != nil {
			return err
		}
		if last.State != workflows.StateUnhealthySupervisor {
			return fmt.Errorf("supervisor state %s/%s", last.State, last.DetailedState)
		}
		return nil
	}), "the supervisor must report the broker unreachable; last status %+v", last)
	t.Logf("with no broker the supervisor is %s/%s", last.State, last.DetailedState)
	down := pick(2*time.Second, 20*time.Second)
	time.Sleep(down) // the broker stays away a while longer

	startKfake(t, addr, topicName(t), 4)
	w.waitReady(time.Minute)
	require.NoError(t, p.produce(pick[int64](4000, 20000), 2000))
	e.waitCaughtUp(spec, 3*time.Minute)
	e.stopAndWait(spec, run, 3*time.Minute)
	e.verify(spec, p.gen.RunID, p.produced())
}
