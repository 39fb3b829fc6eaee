// Package cli is the starter command: it starts, updates, lists, inspects,
// checkpoints, suspends, resumes, resets and stops supervisors, validates
// specs, shows their history, segments, Iceberg table and saved parse
// errors, builds the table of a datasource that had none, serves the
// tables through the Iceberg REST catalog protocol, migrates the metadata
// database, produces test messages to Kafka and writes shell
// completion scripts.
// Everything it reads and writes goes through IO, so tests run the whole
// command line in-process.
package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.temporal.io/sdk/client"

	"handoff/internal/domain"
)

// IO is what the CLI reads and writes. main passes the process's own;
// tests pass buffers and a map-backed Getenv.
type IO struct {
	Stdin  io.Reader
	Stdout io.Writer // data: command results in text or json
	Stderr io.Writer // errors and logs
	Getenv func(string) string
	Now    func() time.Time // the clock of watch and wait; nil: time.Now
}

// dialTimeout bounds connecting to Temporal or Postgres, so an unreachable
// server fails fast with its address instead of hanging.
const dialTimeout = 5 * time.Second

// Run executes one starter command line (without the program name) and
// returns the process exit code.
func Run(ctx context.Context, args []string, stdio IO) int {
	return run(ctx, args, stdio, client.DialContext)
}

type dialFunc func(context.Context, client.Options) (client.Client, error)

func run(ctx context.Context, args []string, stdio IO, dial dialFunc) int {
	if stdio.Getenv == nil {
		stdio.Getenv = func(string) string { return "" }
	}
	if stdio.Stdin == nil {
		stdio.Stdin = strings.NewReader("")
	}
	if stdio.Now == nil {
		stdio.Now = time.Now
	}
	a := &app{
		io:          stdio,
		now:         stdio.Now,
		dial:        dial,
		dialTimeout: dialTimeout,
		output:      outputText,
		log:         slog.New(slog.NewTextHandler(stdio.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	}
	a.out = printer{w: stdio.Stdout, format: &a.output}
	defer a.close()

	root := a.rootCommand()
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return ExitOK
	}
	code := exitCode(err, a.actionStarted)
	fmt.Fprintf(stdio.Stderr, "error: %v\n", err)
	if code == ExitUsage {
		fmt.Fprintf(stdio.Stderr, "Run '%s --help' for usage.\n", cmd.CommandPath())
	}
	return code
}

// app holds the global flags and what commands share: the printer, the
// logger and the lazily dialed Temporal client.
type app struct {
	io          IO
	now         func() time.Time
	dial        dialFunc
	dialTimeout time.Duration
	log         *slog.Logger
	out         printer

	output    outputFormat
	address   string
	namespace string

	temporalClient client.Client
	actionStarted  bool
}

func (a *app) close() {
	if a.temporalClient != nil {
		a.temporalClient.Close()
	}
}

func (a *app) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "starter",
		Short: "Start and operate handoff supervisors (Kafka → Parquet ingestion)",
		Long: `starter starts, updates, lists, inspects, checkpoints, suspends, resets and
stops handoff supervisors, validates supervisor specs, shows the specs a
supervisor accepted, the segments it published, its datasource's Iceberg
table and the unparseable rows it saved, builds the table of a datasource
that published segments before it had one, serves the tables to other
engines through the Iceberg REST catalog protocol (catalog serve), and
migrates the metadata database. produce sends JSON messages (a file, or generated sample events)
to a Kafka topic, to try a supervisor out; completion writes a shell
completion script, which completes supervisor ids from the running
supervisors.

Results go to stdout (--output text or json); errors and logs go to stderr.
Exit codes: 0 ok, 1 failure, 2 usage, 3 supervisor not found.`,
		Example: `  starter validate -f spec.json
  starter start -f spec.json --wait
  starter produce --topic orders --generate 1000 --rate 100
  starter list
  starter status orders --watch
  starter checkpoint orders -o json
  TEMPORAL_ADDRESS=temporal:7233 starter stop orders --wait
  source <(starter completion bash)`,
		SilenceErrors:     true,
		SilenceUsage:      true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error { return a.applyEnv(cmd.Flags()) },
	}
	root.SetIn(a.io.Stdin)
	root.SetOut(a.io.Stdout)
	root.SetErr(a.io.Stderr)

	fs := root.PersistentFlags()
	fs.VarP(&a.output, "output", "o", "output format: text or json")
	fs.StringVar(&a.address, "address", "localhost:7233", "Temporal frontend host:port")
	bindEnv(fs, "address", "TEMPORAL_ADDRESS")
	fs.StringVar(&a.namespace, "namespace", "default", "Temporal namespace")
	bindEnv(fs, "namespace", "TEMPORAL_NAMESPACE")

	root.AddCommand(
		a.startCommand(),
		a.updateCommand(),
		a.validateCommand(),
		a.listCommand(),
		a.statusCommand(),
		a.historyCommand(),
		a.segmentsCommand(),
		a.tableCommand(),
		a.catalogCommand(),
		a.compactionCommand(),
		a.retentionCommand(),
		a.killCommand(),
		a.parseErrorsCommand(),
		a.checkpointCommand(),
		a.suspendCommand(),
		a.resumeCommand(),
		a.resetCommand(),
		a.stopCommand(),
		a.migrateCommand(),
		a.produceCommand(),
	)
	a.addCompletion(root)
	return root
}

// action wraps a command's RunE so Run can tell errors of the command itself
// from errors cobra raised while parsing flags and arguments (usage errors).
func (a *app) action(fn func(cmd *cobra.Command, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		a.actionStarted = true
		return fn(cmd, args)
	}
}

const envAnnotation = "starter_env"

// bindEnv makes flag name fall back to environment variable env when it is
// not given on the command line.
func bindEnv(fs *pflag.FlagSet, name, env string) {
	f := fs.Lookup(name)
	f.Usage += " (env " + env + ")"
	if err := fs.SetAnnotation(name, envAnnotation, []string{env}); err != nil {
		panic(err) // a programming error: the flag was just defined
	}
}

// applyEnv sets every flag not given on the command line from its
// environment variable, if that is set: flag, then env, then default.
func (a *app) applyEnv(fs *pflag.FlagSet) error {
	var err error
	fs.VisitAll(func(f *pflag.Flag) {
		envs := f.Annotations[envAnnotation]
		if err != nil || f.Changed || len(envs) == 0 {
			return
		}
		if v := a.io.Getenv(envs[0]); v != "" {
			if setErr := f.Value.Set(v); setErr != nil {
				err = usageErrorf("%s=%q (for --%s): %v", envs[0], v, f.Name, setErr)
			}
		}
	})
	return err
}

// exactlyOneID checks that a command got one supervisor id, and that it
// is a valid one before it becomes a workflow id or a query argument.
func exactlyOneID(cmd *cobra.Command, args []string) error {
	if len(args) != 1 {
		return usageErrorf("%s takes one supervisor id, got %d arguments (e.g. %s orders)", cmd.Name(), len(args), cmd.CommandPath())
	}
	return validID(args[0])
}

// validID refuses a supervisor id that no spec could have.
func validID(id string) error {
	if err := domain.ValidateName("supervisor id", id); err != nil {
		return usageErrorf("%v", err)
	}
	return nil
}
