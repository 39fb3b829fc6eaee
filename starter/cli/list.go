package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"golang.org/x/sync/errgroup"

	"handoff/internal/domain"
	"handoff/workflows"
)

// listQueryTimeout bounds each status query of list (and the listing that
// names known supervisors in not-found errors): one silent supervisor must
// not stall the whole table.
const listQueryTimeout = 3 * time.Second

// runningSupervisorsQuery is the visibility query of list.
var runningSupervisorsQuery = fmt.Sprintf(`WorkflowType = %q AND ExecutionStatus = "Running"`, workflows.SupervisorWorkflowName)

func (a *app) listCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the running supervisors with their state, datasource, topic and lag",
		Long: `list finds the running supervisor workflows and queries each for its status.
A supervisor that does not answer within a few seconds is still listed, with
the state its search attributes last recorded.`,
		Example: `  starter list
  starter list -o json | jq -r '.[].id'`,
		Args: cobra.NoArgs,
		RunE: a.action(func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			c, err := a.temporal(ctx)
			if err != nil {
				return err
			}
			infos, err := listSupervisors(ctx, c)
			if err != nil {
				return err
			}
			res := make(listResult, len(infos))
			g, gctx := errgroup.WithContext(ctx)
			g.SetLimit(8)
			for i, info := range infos {
				g.Go(func() error {
					res[i] = summarize(gctx, c, info)
					return nil
				})
			}
			_ = g.Wait() // summarize records errors per row
			return a.out.print(res)
		}),
	}
}

// listSupervisors returns every running supervisor workflow, all pages.
func listSupervisors(ctx context.Context, c client.Client) ([]*workflowpb.WorkflowExecutionInfo, error) {
	var infos []*workflowpb.WorkflowExecutionInfo
	req := &workflowservice.ListWorkflowExecutionsRequest{Query: runningSupervisorsQuery}
	for {
		resp, err := c.ListWorkflow(ctx, req)
		if err != nil {
			return nil, fmt.Errorf("list supervisors: %w", err)
		}
		infos = append(infos, resp.GetExecutions()...)
		if len(resp.GetNextPageToken()) == 0 {
			return infos, nil
		}
		req.NextPageToken = resp.GetNextPageToken()
	}
}

// supervisorIDOf turns "supervisor/<id>" into <id>.
func supervisorIDOf(workflowID string) string {
	return strings.TrimPrefix(workflowID, workflows.SupervisorWorkflowID(""))
}

// supervisorSummary is a SupervisorStatus cut down to a list row, with the
// same json names. Lag is null when the status query failed.
type supervisorSummary struct {
	ID          string `json:"id"`
	State       string `json:"state"`
	DataSource  string `json:"dataSource"`
	Topic       string `json:"topic"`
	Lag         *int64 `json:"aggregateLag"`
	StatusError string `json:"statusError,omitempty"`
}

// summarize queries one supervisor; if it does not answer, the row falls
// back on the search attributes the supervisor keeps up to date.
func summarize(ctx context.Context, c client.Client, info *workflowpb.WorkflowExecutionInfo) supervisorSummary {
	id := supervisorIDOf(info.GetExecution().GetWorkflowId())
	st, err := queryStatus(ctx, c, id, listQueryTimeout)
	if err == nil {
		return supervisorSummary{ID: id, State: st.State, DataSource: st.DataSource, Topic: st.Topic, Lag: &st.Lag}
	}
	return supervisorSummary{
		ID:          id,
		State:       searchKeyword(info, domain.SearchAttributeState),
		DataSource:  searchKeyword(info, domain.SearchAttributeDataSource),
		Topic:       searchKeyword(info, domain.SearchAttributeTopic),
		StatusError: err.Error(),
	}
}

// searchKeyword is the keyword search attribute name of a listed workflow,
// "" when it has none.
func searchKeyword(info *workflowpb.WorkflowExecutionInfo, name string) string {
	var s string
	if p, ok := info.GetSearchAttributes().GetIndexedFields()[name]; ok {
		_ = converter.GetDefaultDataConverter().FromPayload(p, &s)
	}
	return s
}

// listResult prints as a json array.
type listResult []supervisorSummary

func (r listResult) writeText(w io.Writer) error {
	if len(r) == 0 {
		_, err := fmt.Fprintln(w, "no running supervisors")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATE\tDATASOURCE\tTOPIC\tLAG")
	for _, s := range r {
		state, lag := orDash(s.State), "-"
		if s.Lag != nil {
			lag = strconv.FormatInt(*s.Lag, 10)
		} else {
			state += " (no answer)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.ID, state, orDash(s.DataSource), orDash(s.Topic), lag)
	}
	return tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
