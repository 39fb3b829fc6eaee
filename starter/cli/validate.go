package cli

import (
	"fmt"
	"io"
	"os"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/spf13/cobra"

	"handoff/internal/domain"
	"handoff/internal/lake"
)

func (a *app) validateCommand() *cobra.Command {
	var file string
	var checkTable bool
	var lf lakeFlags
	cmd := &cobra.Command{
		Use:   "validate -f SPEC",
		Short: "Check a supervisor spec without contacting any server",
		Long: `validate parses and checks a supervisor spec, fills its defaults, and prints
it (json) or a one-line summary (text). Errors name the field path, or the
line and column for malformed JSON. Nothing is started.

With --table it also reads the datasource's Iceberg table (from the
metadata database and deep storage, as starter table does) and refuses a
spec whose columns the table cannot take: a dimension or metric whose type
differs from the table's column. Without --table no server is contacted.`,
		Example: `  starter validate -f spec.json
  starter validate -f spec.json -o json   # the spec with every default filled
  starter validate -f spec.json --table   # also against the datasource's Iceberg table
  cat spec.json | starter validate -f -`,
		Args: cobra.NoArgs,
		RunE: a.action(func(cmd *cobra.Command, _ []string) error {
			spec, err := a.readSpec(file)
			if err != nil {
				return err
			}
			if checkTable && spec.IOConfig.TableOn() {
				err := a.withLake(cmd.Context(), lf, lake.Config{}, func(_ *pgxpool.Pool, l *lake.Lake) error {
					return l.CheckSchema(cmd.Context(), spec.DataSchema.DataSource, spec.DataSchema.DeclaredSchema())
				})
				if err != nil {
					return fmt.Errorf("invalid spec %s: dataSchema: %w", file, err)
				}
			}
			return a.out.print(validateResult{spec})
		}),
	}
	addSpecFlag(cmd, &file)
	cmd.Flags().BoolVar(&checkTable, "table", false, "also check the spec against the datasource's Iceberg table")
	lf.add(cmd.Flags())
	return cmd
}

func addSpecFlag(cmd *cobra.Command, file *string) {
	cmd.Flags().StringVarP(file, "file", "f", "", "supervisor spec JSON file (- for stdin)")
	_ = cmd.MarkFlagRequired("file")
}

// readSpec reads, parses and validates a spec file; errors name the file.
func (a *app) readSpec(path string) (domain.Spec, error) {
	var data []byte
	var err error
	if path == "-" {
		path = "stdin"
		data, err = io.ReadAll(a.io.Stdin)
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return domain.Spec{}, fmt.Errorf("read spec: %w", err)
	}
	spec, err := domain.ParseSpec(data)
	if err != nil {
		return domain.Spec{}, fmt.Errorf("invalid spec %s: %w", path, err)
	}
	return spec, nil
}

// validateResult prints as the normalized spec in json mode.
type validateResult struct {
	domain.Spec
}

func (r validateResult) writeText(w io.Writer) error {
	_, err := fmt.Fprintf(w, "spec ok: supervisor %s reads topic %s into datasource %s (%s)\n",
		r.ID, r.IOConfig.Topic, r.DataSchema.DataSource, plural(r.IOConfig.TaskCount, "task group"))
	return err
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
