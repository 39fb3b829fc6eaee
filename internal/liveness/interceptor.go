package liveness

import (
	"context"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/interceptor"
)

// Interceptor records every activity the worker runs in a Registry, from
// its start until it returns.
type Interceptor struct {
	interceptor.WorkerInterceptorBase
	reg *Registry
}

// NewInterceptor records into reg.
func NewInterceptor(reg *Registry) *Interceptor { return &Interceptor{reg: reg} }

// InterceptActivity wraps each activity execution.
func (i *Interceptor) InterceptActivity(ctx context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	return &activityInbound{ActivityInboundInterceptorBase: interceptor.ActivityInboundInterceptorBase{Next: next}, reg: i.reg}
}

type activityInbound struct {
	interceptor.ActivityInboundInterceptorBase
	reg *Registry
}

func (a *activityInbound) ExecuteActivity(ctx context.Context, in *interceptor.ExecuteActivityInput) (any, error) {
	ref := refOf(activity.GetInfo(ctx))
	a.reg.add(ref)
	defer a.reg.remove(ref)
	return a.Next.ExecuteActivity(ctx, in)
}
