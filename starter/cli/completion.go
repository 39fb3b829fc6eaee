package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"handoff/internal/domain"
)

// completionTimeout bounds dialing Temporal and listing the supervisors
// while the shell waits for completions: better none than a hung prompt.
const completionTimeout = 2 * time.Second

// supervisorIDCommands take a supervisor id as their argument; their
// argument completes from the running supervisors.
var supervisorIDCommands = []string{
	"status", "checkpoint", "stop", "suspend", "resume", "reset", "history", "segments", "table", "parse-errors",
}

// addCompletion adds cobra's completion command (bash, zsh, fish,
// powershell) with an example, and the completions of arguments and flags.
func (a *app) addCompletion(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		switch {
		case c.Name() == "completion":
			c.Example = `  source <(starter completion bash)                        # this bash session
  starter completion bash > /etc/bash_completion.d/starter  # every bash session
  starter completion zsh > "${fpath[1]}/_starter"
  starter completion fish > ~/.config/fish/completions/starter.fish
  starter completion powershell | Out-String | Invoke-Expression`
			c.Long += `
Supervisor ids complete from the running supervisors (the same listing as
list, given up after ` + completionTimeout.String() + `); --address, --namespace and their
environment variables say which server to ask.`
			// A RunE, so `completion` and `completion tcsh` are usage
			// errors, as with migrate, not help.
			c.Args = cobra.ArbitraryArgs
			c.RunE = a.action(func(_ *cobra.Command, args []string) error {
				if len(args) > 0 {
					return usageErrorf("unknown shell %q: want bash, zsh, fish or powershell", args[0])
				}
				return usageErrorf("completion needs a shell: bash, zsh, fish or powershell")
			})
		case slices.Contains(supervisorIDCommands, c.Name()):
			c.ValidArgsFunction = a.completeSupervisorIDs
		}
	}
	_ = root.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(
		[]cobra.Completion{string(outputText), string(outputJSON)}, cobra.ShellCompDirectiveNoFileComp))
}

// completeSupervisorIDs completes a supervisor id from the running
// supervisors, described by the state, topic and datasource their search
// attributes record. Any error (no server, a timeout) completes nothing.
func (a *app) completeSupervisorIDs(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	const none = cobra.ShellCompDirectiveNoFileComp
	if len(args) > 0 {
		return nil, none
	}
	// Completion runs no hooks of the command: apply the env fallbacks here.
	if err := a.applyEnv(cmd.Flags()); err != nil {
		return nil, none
	}
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, completionTimeout)
	defer cancel()
	c, err := a.temporal(ctx)
	if err != nil {
		return nil, none
	}
	infos, err := listSupervisors(ctx, c)
	if err != nil {
		return nil, none
	}
	var out []cobra.Completion
	for _, info := range infos {
		id := supervisorIDOf(info.GetExecution().GetWorkflowId())
		if !strings.HasPrefix(id, toComplete) {
			continue
		}
		out = append(out, cobra.CompletionWithDesc(id, fmt.Sprintf("%s, topic %s → datasource %s",
			orDash(searchKeyword(info, domain.SearchAttributeState)),
			orDash(searchKeyword(info, domain.SearchAttributeTopic)),
			orDash(searchKeyword(info, domain.SearchAttributeDataSource)))))
	}
	slices.Sort(out)
	return out, none
}
