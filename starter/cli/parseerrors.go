package cli

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/spf13/cobra"

	"handoff/internal/pgstore"
)

// messagePreview is how many characters of a message parse-errors prints
// in text.
const messagePreview = 80

func (a *app) parseErrorsCommand() *cobra.Command {
	var dbURL string
	var limit int
	cmd := &cobra.Command{
		Use:   "parse-errors ID [--limit N]",
		Short: "List the unparseable rows a supervisor saved, latest first",
		Long: `parse-errors reads from the metadata database the unparseable messages the
supervisor saved (the latest tuningConfig.maxSavedParseExceptions of them),
latest first: in text one line each with when it was saved, where it was
read, the parse error and the message quoted and cut to 80 characters; in
json the whole records, the message as a string when it is valid UTF-8 and
in base64 otherwise (messageEncoding says which). A message longer than
64 KiB was saved cut, which "truncated" says.`,
		Example: `  starter parse-errors orders --database-url postgres://handoff:handoff@localhost:5432/handoff
  starter parse-errors orders --limit 5
  DATABASE_URL=postgres://localhost/handoff starter parse-errors orders --limit 0 -o json | jq -r '.[].error'`,
		Args: exactlyOneID,
		RunE: a.action(func(cmd *cobra.Command, args []string) error {
			ctx, id := cmd.Context(), args[0]
			if limit < 0 {
				return usageErrorf("--limit %d: want 0 (all) or more", limit)
			}
			var errs []pgstore.ParseError
			var specs []pgstore.SpecRecord
			err := a.withPool(ctx, dbURL, func(pool *pgxpool.Pool) error {
				store := pgstore.New(pool)
				var err error
				if errs, err = store.ParseErrors(ctx, id); err != nil || len(errs) > 0 {
					return err
				}
				// Nothing saved: is there such a supervisor, and does it save any?
				specs, err = store.SpecHistory(ctx, id)
				return err
			})
			if err != nil {
				return err
			}
			if len(errs) == 0 && len(specs) == 0 {
				return a.unknownSupervisor(ctx, id)
			}
			res := parseErrorsResult{supervisor: id, saved: len(errs), records: []parseErrorRecord{}}
			if len(errs) == 0 {
				res.savesNone = savesNoParseErrors(specs[len(specs)-1].Spec)
			}
			if limit > 0 && len(errs) > limit {
				errs = errs[:limit]
			}
			for _, e := range errs {
				res.records = append(res.records, newParseErrorRecord(e))
			}
			return a.out.print(res)
		}),
	}
	cmd.Flags().IntVar(&limit, "limit", 20, "show the latest N (0: all)")
	cmd.Flags().StringVar(&dbURL, "database-url", "", "Postgres URL of the metadata database")
	bindEnv(cmd.Flags(), "database-url", "DATABASE_URL")
	return cmd
}

// savesNoParseErrors tells whether a stored spec keeps no unparseable rows.
func savesNoParseErrors(spec json.RawMessage) bool {
	var s struct {
		TuningConfig struct {
			MaxSavedParseExceptions int `json:"maxSavedParseExceptions"`
		} `json:"tuningConfig"`
	}
	return json.Unmarshal(spec, &s) == nil && s.TuningConfig.MaxSavedParseExceptions == 0
}

// Values of parseErrorRecord.MessageEncoding.
const (
	encodingUTF8   = "utf-8"
	encodingBase64 = "base64"
)

// parseErrorRecord is a pgstore.ParseError as parse-errors prints it in json.
type parseErrorRecord struct {
	SupervisorID string `json:"supervisorId"`
	DataSource   string `json:"dataSource"`
	Topic        string `json:"topic"`
	Partition    int32  `json:"partition"`
	Offset       int64  `json:"offset"`
	Error        string `json:"error"`
	// Message is the message as saved: the text itself when it is valid
	// UTF-8, else its standard base64, as MessageEncoding says.
	Message         string `json:"message"`
	MessageEncoding string `json:"messageEncoding"`
	// Truncated: the message was longer than what is saved of it.
	Truncated bool      `json:"truncated"`
	CreatedAt time.Time `json:"createdAt"`

	raw []byte
}

func newParseErrorRecord(e pgstore.ParseError) parseErrorRecord {
	r := parseErrorRecord{
		SupervisorID: e.SupervisorID, DataSource: e.DataSource, Topic: e.Topic, Partition: e.Partition, Offset: e.Offset,
		Error: e.Error, Truncated: e.Truncated, CreatedAt: e.CreatedAt.UTC(), raw: e.Message,
	}
	if utf8.Valid(e.Message) {
		r.Message, r.MessageEncoding = string(e.Message), encodingUTF8
	} else {
		r.Message, r.MessageEncoding = base64.StdEncoding.EncodeToString(e.Message), encodingBase64
	}
	return r
}

// parseErrorsResult prints as a json array of its records.
type parseErrorsResult struct {
	supervisor string
	saved      int  // saved records, before --limit
	savesNone  bool // nothing saved, and the latest spec saves nothing
	records    []parseErrorRecord
}

func (r parseErrorsResult) MarshalJSON() ([]byte, error) { return json.Marshal(r.records) }

func (r parseErrorsResult) writeText(w io.Writer) error {
	if len(r.records) == 0 {
		msg := "no parse errors saved for supervisor " + r.supervisor
		if r.savesNone {
			msg += " (its spec saves none: set tuningConfig.maxSavedParseExceptions)"
		}
		_, err := fmt.Fprintln(w, msg)
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tPARTITION\tOFFSET\tERROR\tMESSAGE")
	for _, e := range r.records {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\n", e.CreatedAt.Format(time.RFC3339), e.Partition, e.Offset,
			strings.Join(strings.Fields(e.Error), " "), previewMessage(e.raw, e.Truncated))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(r.records) < r.saved {
		_, err := fmt.Fprintf(w, "the latest %d of %d saved; --limit 0 shows all\n", len(r.records), r.saved)
		return err
	}
	return nil
}

// previewMessage quotes the first messagePreview characters of a message
// (bytes, if it is not UTF-8). "…" marks a message cut here or when saved.
func previewMessage(msg []byte, savedTruncated bool) string {
	s, cut := string(msg), false
	if utf8.Valid(msg) {
		if utf8.RuneCountInString(s) > messagePreview {
			n := 0
			for i := range s {
				if n == messagePreview {
					s, cut = s[:i], true
					break
				}
				n++
			}
		}
	} else if len(s) > messagePreview {
		s, cut = s[:messagePreview], true
	}
	out := strconv.Quote(s)
	switch {
	case savedTruncated:
		out += fmt.Sprintf("… (first %d bytes saved)", len(msg))
	case cut:
		out += fmt.Sprintf("… (%d bytes)", len(msg))
	}
	return out
}
