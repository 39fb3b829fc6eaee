package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"handoff/workflows"
)

// describeStuck writes what a supervisor that did not come up was doing
// into dir/stuck-<id>.json: its status (or the query's error), and the
// histories and pending activities of its workflow and of its first
// group's, so that a start that stalls can be read after the stack is
// gone. It returns a line saying the state and where the file is.
func describeStuck(ctx context.Context, tc client.Client, dir, id string) string {
	out := map[string]any{"supervisor": id}
	line := id
	st, err := supervisorStatus(ctx, tc, id)
	if err != nil {
		out["statusError"] = err.Error()
		line += fmt.Sprintf(": status: %v", err)
	} else {
		out["status"] = st
		line += fmt.Sprintf(": %s (%s)", st.State, st.DetailedState)
		if len(st.Groups) > 0 {
			line += fmt.Sprintf(", group 0 running %v", st.Groups[0].Running)
		}
	}
	histories, pending := map[string]any{}, map[string]any{}
	for _, wid := range []string{workflows.SupervisorWorkflowID(id), workflows.TaskGroupWorkflowID(id, 0)} {
		if d, err := tc.DescribeWorkflowExecution(ctx, wid, ""); err != nil {
			pending[wid] = err.Error()
		} else {
			pending[wid] = d.GetPendingActivities()
		}
		var events []any
		it := tc.GetWorkflowHistory(ctx, wid, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for it.HasNext() {
			e, err := it.Next()
			if err != nil {
				events = append(events, map[string]string{"error": err.Error()})
				break
			}
			events = append(events, e)
		}
		histories[wid] = events
	}
	out["histories"], out["pendingActivities"] = histories, pending
	path := filepath.Join(dir, "stuck-"+id+".json")
	b, err := json.MarshalIndent(out, "", " ")
	if err == nil {
		err = os.WriteFile(path, b, 0o644)
	}
	if err != nil {
		return line + fmt.Sprintf("; writing %s: %v", path, err)
	}
	return line + "; its status and histories are in " + path
}
