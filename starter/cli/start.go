package cli

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/spf13/cobra"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"handoff/workflows"
)

func (a *app) startCommand() *cobra.Command {
	var file, uiURL string
	cmd := &cobra.Command{
		Use:   "start -f SPEC",
		Short: "Validate a spec and start its supervisor",
		Long: `start validates the spec (like validate; a bad spec starts nothing) and starts
the supervisor workflow supervisor/<id>. If that supervisor is already
running, start says so and leaves it alone.`,
		Example: `  starter start -f spec.json
  starter start -f spec.json --address temporal:7233 --namespace ingest -o json`,
		Args: cobra.NoArgs,
		RunE: a.action(func(cmd *cobra.Command, _ []string) error {
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
			res.URL = workflowURL(uiURL, a.namespace, res.WorkflowID)
			run, err := c.ExecuteWorkflow(cmd.Context(), client.StartWorkflowOptions{
				ID:        res.WorkflowID,
				TaskQueue: workflows.TaskQueue,
				// Without this the SDK silently returns the running workflow.
				WorkflowExecutionErrorWhenAlreadyStarted: true,
			}, workflows.SupervisorWorkflowName, workflows.SupervisorInput{Spec: spec})
			var started *serviceerror.WorkflowExecutionAlreadyStarted
			switch {
			case errors.As(err, &started):
				res.RunID, res.AlreadyRunning = started.RunId, true
			case err != nil:
				return fmt.Errorf("start workflow %s: %w", res.WorkflowID, err)
			default:
				res.RunID = run.GetRunID()
			}
			return a.out.print(res)
		}),
	}
	addSpecFlag(cmd, &file)
	cmd.Flags().StringVar(&uiURL, "ui-url", "http://localhost:8233", "Temporal UI base URL, for the workflow link")
	bindEnv(cmd.Flags(), "ui-url", "TEMPORAL_UI_URL")
	return cmd
}

// workflowURL links to a workflow in the Temporal UI.
func workflowURL(base, namespace, workflowID string) string {
	return strings.TrimRight(base, "/") + "/namespaces/" + url.PathEscape(namespace) +
		"/workflows/" + url.PathEscape(workflowID)
}

type startResult struct {
	SupervisorID   string `json:"supervisorId"`
	WorkflowID     string `json:"workflowId"`
	RunID          string `json:"runId"`
	Namespace      string `json:"namespace"`
	URL            string `json:"url"`
	AlreadyRunning bool   `json:"alreadyRunning"`
}

func (r startResult) writeText(w io.Writer) error {
	verb := "started supervisor " + r.SupervisorID
	if r.AlreadyRunning {
		verb = "supervisor " + r.SupervisorID + " is already running; left unchanged"
	}
	_, err := fmt.Fprintf(w, "%s\n  workflow  %s\n  run       %s\n  ui        %s\n", verb, r.WorkflowID, r.RunID, r.URL)
	return err
}
