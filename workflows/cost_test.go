package workflows

import (
	"sync"
	"time"

	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/workflow"
)

// costCounter counts, per workflow type, what writes history: activities
// and local activities started, timers, signals sent and received. The test
// suite keeps no history of its own, so tests estimate it from these
// (historyEvents).
type costCounter struct {
	interceptor.WorkerInterceptorBase
	mu     sync.Mutex
	counts map[string]*cost
}

type cost struct {
	Activities, LocalActivities, Timers, SignalsSent, SignalsReceived int
}

// historyEvents is an upper estimate of the history a run with these
// counts writes: an activity is scheduled, started and completed, and its
// completion wakes the workflow (a workflow task: scheduled, started,
// completed); a timer is started and fired and wakes it; a signal sent is
// initiated and confirmed; a signal received is one event and a wake; a
// local activity is one marker; the run's start is two events and a task.
func (c cost) historyEvents() int {
	return 5 + 6*c.Activities + c.LocalActivities + 5*c.Timers + 2*c.SignalsSent + 4*c.SignalsReceived
}

func newCostCounter() *costCounter { return &costCounter{counts: map[string]*cost{}} }

func (c *costCounter) of(workflowType string) cost {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p := c.counts[workflowType]; p != nil {
		return *p
	}
	return cost{}
}

func (c *costCounter) add(workflowType string, f func(*cost)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.counts[workflowType]
	if p == nil {
		p = &cost{}
		c.counts[workflowType] = p
	}
	f(p)
}

func (c *costCounter) InterceptWorkflow(ctx workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	return &costInbound{WorkflowInboundInterceptorBase: interceptor.WorkflowInboundInterceptorBase{Next: next}, c: c, wt: workflow.GetInfo(ctx).WorkflowType.Name}
}

type costInbound struct {
	interceptor.WorkflowInboundInterceptorBase
	c  *costCounter
	wt string
}

func (i *costInbound) Init(outbound interceptor.WorkflowOutboundInterceptor) error {
	return i.Next.Init(&costOutbound{WorkflowOutboundInterceptorBase: interceptor.WorkflowOutboundInterceptorBase{Next: outbound}, in: i})
}

func (i *costInbound) HandleSignal(ctx workflow.Context, in *interceptor.HandleSignalInput) error {
	i.c.add(i.wt, func(c *cost) { c.SignalsReceived++ })
	return i.Next.HandleSignal(ctx, in)
}

type costOutbound struct {
	interceptor.WorkflowOutboundInterceptorBase
	in *costInbound
}

func (o *costOutbound) ExecuteActivity(ctx workflow.Context, activityType string, args ...any) workflow.Future {
	o.in.c.add(o.in.wt, func(c *cost) { c.Activities++ })
	return o.Next.ExecuteActivity(ctx, activityType, args...)
}

func (o *costOutbound) ExecuteLocalActivity(ctx workflow.Context, activityType string, args ...any) workflow.Future {
	o.in.c.add(o.in.wt, func(c *cost) { c.LocalActivities++ })
	return o.Next.ExecuteLocalActivity(ctx, activityType, args...)
}

func (o *costOutbound) NewTimer(ctx workflow.Context, d time.Duration) workflow.Future {
	o.in.c.add(o.in.wt, func(c *cost) { c.Timers++ })
	return o.Next.NewTimer(ctx, d)
}

func (o *costOutbound) NewTimerWithOptions(ctx workflow.Context, d time.Duration, opts workflow.TimerOptions) workflow.Future {
	o.in.c.add(o.in.wt, func(c *cost) { c.Timers++ })
	return o.Next.NewTimerWithOptions(ctx, d, opts)
}

func (o *costOutbound) SignalExternalWorkflow(ctx workflow.Context, workflowID, runID, signalName string, arg any) workflow.Future {
	o.in.c.add(o.in.wt, func(c *cost) { c.SignalsSent++ })
	return o.Next.SignalExternalWorkflow(ctx, workflowID, runID, signalName, arg)
}

func (o *costOutbound) ExecuteChildWorkflow(ctx workflow.Context, childWorkflowType string, args ...any) workflow.ChildWorkflowFuture {
	o.in.c.add(o.in.wt, func(c *cost) { c.Activities++ }) // initiated, started, closed, and a wake
	return o.Next.ExecuteChildWorkflow(ctx, childWorkflowType, args...)
}
