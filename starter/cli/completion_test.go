package cli

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/sdk/client"
)

// commandNames are the starter commands a user can run.
var commandNames = []string{
	"validate", "start", "update", "checkpoint", "stop", "suspend", "resume", "reset", "status", "list",
	"segments", "table", "parse-errors", "history", "migrate", "produce", "completion",
}

func TestCompletionScripts(t *testing.T) {
	t.Parallel()
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		r := runCLI(t, runOpts{}, "completion", shell)
		require.Equal(t, ExitOK, r.code, "%s: %s", shell, r.stderr)
		assert.Contains(t, r.stdout, "starter", shell)
		assert.Contains(t, r.stdout, "__complete", "%s: the script asks starter itself for completions", shell)
	}

	// The bash script asks `starter __complete` for each word; what it gets
	// for the command word is every command, with its description.
	r := runCLI(t, runOpts{}, "__complete", "")
	require.Equal(t, ExitOK, r.code, r.stderr)
	for _, name := range commandNames {
		assert.Contains(t, "\n"+r.stdout, "\n"+name+"\t", name)
	}
	r = runCLI(t, runOpts{}, "__completeNoDesc", "st")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Equal(t, "start\nstatus\nstop\n:4\n", r.stdout)

	r = runCLI(t, runOpts{}, "completion", "--help")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Contains(t, r.stdout, "Examples:\n  source <(starter completion bash)")
	assert.Contains(t, r.stdout, "Supervisor ids complete from the running supervisors")
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		assert.Contains(t, r.stdout, "starter completion "+shell)
	}
}

func completionClient(t *testing.T) *fakeClient {
	return &fakeClient{listed: []*workflowpb.WorkflowExecutionInfo{
		runningSupervisor(t, "orders", "RUNNING", "orders_ds", "orders"),
		runningSupervisor(t, "wiki", "SUSPENDED", "wiki", "wiki"),
		runningSupervisor(t, "orders-eu", "PENDING", "orders_ds", "orders-eu"),
	}}
}

func TestSupervisorIDsCompleteFromTheRunningSupervisors(t *testing.T) {
	t.Parallel()
	fc := completionClient(t)
	var opts client.Options
	env := map[string]string{"TEMPORAL_ADDRESS": "env-host:7233", "TEMPORAL_NAMESPACE": "ingest"}
	r := runCLI(t, runOpts{env: env, dial: dialTo(fc, &opts)}, "__complete", "status", "ord")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Equal(t, "orders\tRUNNING, topic orders → datasource orders_ds\n"+
		"orders-eu\tPENDING, topic orders-eu → datasource orders_ds\n:4\n", r.stdout)
	assert.Equal(t, "env-host:7233", opts.HostPort, "the address falls back to TEMPORAL_ADDRESS")
	assert.Equal(t, "ingest", opts.Namespace)
	assert.Zero(t, fc.queries, "completion lists; it queries no supervisor")

	r = runCLI(t, runOpts{dial: dialTo(fc, &opts)}, "__completeNoDesc", "--address", "flag-host:1", "stop", "")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Equal(t, "orders\norders-eu\nwiki\n:4\n", r.stdout)
	assert.Equal(t, "flag-host:1", opts.HostPort)

	// Every command that takes a supervisor id completes it, and only once.
	for _, cmd := range supervisorIDCommands {
		r := runCLI(t, runOpts{dial: dialTo(fc, nil)}, "__completeNoDesc", cmd, "w")
		assert.Equal(t, "wiki\n:4\n", r.stdout, cmd)
		r = runCLI(t, runOpts{dial: dialTo(fc, nil)}, "__completeNoDesc", cmd, "wiki", "")
		assert.Equal(t, ":4\n", r.stdout, cmd)
	}
}

func TestEveryIDCommandCompletesIDs(t *testing.T) {
	t.Parallel()
	a := &app{}
	root := a.rootCommand()
	for _, c := range root.Commands() {
		if strings.Contains(c.Use, " ID") {
			assert.NotNil(t, c.ValidArgsFunction, "starter %s takes a supervisor id: it should complete it", c.Name())
		}
	}
}

func TestSupervisorIDCompletionGivesNothingOnError(t *testing.T) {
	t.Parallel()
	refused := func(context.Context, client.Options) (client.Client, error) {
		return nil, errors.New("connection refused")
	}
	for name, o := range map[string]runOpts{
		"unreachable": {dial: refused},
		"list fails":  {dial: dialTo(&fakeClient{listErr: errors.New("visibility unavailable")}, nil)},
	} {
		r := runCLI(t, o, "__complete", "status", "")
		assert.Equal(t, ExitOK, r.code, name)
		assert.Equal(t, ":4\n", r.stdout, "%s: no ids, and no file names either", name)
	}
}

func TestSupervisorIDCompletionGivesUpQuickly(t *testing.T) {
	t.Parallel()
	fc := &fakeClient{listHang: true}
	start := time.Now()
	r := runCLI(t, runOpts{dial: dialTo(fc, nil)}, "__complete", "status", "")
	assert.Equal(t, ExitOK, r.code)
	assert.Equal(t, ":4\n", r.stdout)
	assert.Less(t, time.Since(start), completionTimeout+2*time.Second)
}
