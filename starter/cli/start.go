package cli

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"handoff/internal/domain"
	"handoff/workflows"
)

func (a *app) startCommand() *cobra.Command {
	var file, uiURL string
	var wait bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "start -f SPEC",
		Short: "Validate a spec and start its supervisor",
		Long: `start validates the spec (like validate; a bad spec starts nothing) and starts
the supervisor workflow supervisor/<id>, with search attributes Supervisor,
DataSource, Topic and SupervisorState for filtering in the Temporal UI. If
that supervisor is already running, start gives it the spec instead, as
update does (and prints what update prints).

With --wait it then queries the supervisor's status until its state is
RUNNING or IDLE, printing each state it goes through on stderr, and prints
the result with that state.

It links to the workflow in the Temporal UI only when it knows where the UI
is (--ui-url or TEMPORAL_UI_URL; make dev passes its own): the UI's address
cannot be told from Temporal's, so it is never guessed. It fails (exit 1), naming the last state and the
recent errors, if the supervisor becomes UNHEALTHY_SUPERVISOR or
UNHEALTHY_TASKS, is suspended or stops, or is not ready within --timeout.`,
		Example: `  starter start -f spec.json
  starter start -f spec.json --wait --timeout 5m
  starter start -f spec.json --address temporal:7233 --namespace ingest -o json`,
		Args: cobra.NoArgs,
		RunE: a.action(func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().Changed("timeout") && !wait {
				return usageErrorf("--timeout needs --wait")
			}
			if timeout <= 0 {
				return usageErrorf("--timeout %s: want a positive duration, e.g. 2m", timeout)
			}
			spec, err := a.readSpec(file)
			if err != nil {
				return err
			}
			c, err := a.temporal(cmd.Context())
			if err != nil {
				return err
			}
			res := startResult{
				SupervisorID: spec.ID,
				WorkflowID:   workflows.SupervisorWorkflowID(spec.ID),
				Namespace:    a.namespace,
			}
			if uiURL != "" {
				res.URL = workflowURL(uiURL, a.namespace, res.WorkflowID)
			}
			run, err := c.ExecuteWorkflow(cmd.Context(), startOptions(res.WorkflowID, spec),
				workflows.SupervisorWorkflowName, workflows.SupervisorInput{Spec: spec})
			var started *serviceerror.WorkflowExecutionAlreadyStarted
			var invalid *serviceerror.InvalidArgument
			switch {
			case errors.As(err, &started):
				upd, err := updateSpec(cmd.Context(), c, spec)
				if err != nil {
					return err
				}
				if wait {
					var werr error
					upd.State, werr = a.waitReady(cmd.Context(), c, spec.ID, timeout)
					return errors.Join(a.out.print(upd), werr)
				}
				return a.out.print(upd)
			case errors.As(err, &invalid) && strings.Contains(strings.ToLower(invalid.Error()), "search attribute"):
				return fmt.Errorf("start workflow %s: %w (the worker registers the search attributes %s, %s, %s and %s when it starts: start a worker first)",
					res.WorkflowID, err, domain.SearchAttributeSupervisor, domain.SearchAttributeDataSource,
					domain.SearchAttributeTopic, domain.SearchAttributeState)
			case err != nil:
				return fmt.Errorf("start workflow %s: %w", res.WorkflowID, err)
			}
			res.RunID = run.GetRunID()
			if wait {
				var werr error
				res.State, werr = a.waitReady(cmd.Context(), c, spec.ID, timeout)
				return errors.Join(a.out.print(res), werr)
			}
			return a.out.print(res)
		}),
	}
	addSpecFlag(cmd, &file)
	cmd.Flags().BoolVar(&wait, "wait", false, "wait until the supervisor is RUNNING or IDLE")
	cmd.Flags().DurationVar(&timeout, "timeout", 2*time.Minute, "how long --wait waits")
	cmd.Flags().StringVar(&uiURL, "ui-url", "", "Temporal UI base URL, for the workflow link (none without it)")
	bindEnv(cmd.Flags(), "ui-url", "TEMPORAL_UI_URL")
	return cmd
}

// startOptions starts a supervisor with the search attributes it keeps up
// to date from then on, and a summary for the Temporal UI.
func startOptions(workflowID string, spec domain.Spec) client.StartWorkflowOptions {
	return client.StartWorkflowOptions{
		ID:        workflowID,
		TaskQueue: workflows.TaskQueue,
		// Without this the SDK silently returns the running workflow.
		WorkflowExecutionErrorWhenAlreadyStarted: true,
		TypedSearchAttributes: temporal.NewSearchAttributes(
			temporal.NewSearchAttributeKeyKeyword(domain.SearchAttributeSupervisor).ValueSet(spec.ID),
			temporal.NewSearchAttributeKeyKeyword(domain.SearchAttributeDataSource).ValueSet(spec.DataSchema.DataSource),
			temporal.NewSearchAttributeKeyKeyword(domain.SearchAttributeTopic).ValueSet(spec.IOConfig.Topic),
			temporal.NewSearchAttributeKeyKeyword(domain.SearchAttributeState).ValueSet(workflows.StatePending),
		),
		StaticSummary: fmt.Sprintf("supervisor %s: topic %s → datasource %s, %s",
			spec.ID, spec.IOConfig.Topic, spec.DataSchema.DataSource, plural(spec.IOConfig.TaskCount, "task group")),
	}
}

// workflowURL links to a workflow in the Temporal UI.
func workflowURL(base, namespace, workflowID string) string {
	return strings.TrimRight(base, "/") + "/namespaces/" + url.PathEscape(namespace) +
		"/workflows/" + url.PathEscape(workflowID)
}

type startResult struct {
	SupervisorID string `json:"supervisorId"`
	WorkflowID   string `json:"workflowId"`
	RunID        string `json:"runId"`
	Namespace    string `json:"namespace"`
	// URL is the workflow in the Temporal UI, when --ui-url says where
	// that is.
	URL string `json:"url,omitempty"`
	// State is the last state --wait saw.
	State string `json:"state,omitempty"`
}

func (r startResult) writeText(w io.Writer) error {
	_, err := fmt.Fprintf(w, "started supervisor %s\n  workflow  %s\n  run       %s\n", r.SupervisorID, r.WorkflowID, r.RunID)
	if err == nil && r.URL != "" {
		_, err = fmt.Fprintf(w, "  ui        %s\n", r.URL)
	}
	if err == nil && r.State != "" {
		_, err = fmt.Fprintf(w, "  state     %s\n", r.State)
	}
	return err
}
