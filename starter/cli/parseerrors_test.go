package cli

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"handoff/internal/pgstore"
)

var (
	longMessage = `{"id": 1, "note": "` + strings.Repeat("é", 100) + `"}`
	hugeMessage = append([]byte(`{"blob": "`), make([]byte, 70_000)...) // cut when saved
	notUTF8     = []byte{'{', 0xff, 0xfe, '}'}
	savedErrors = []pgstore.ParseError{
		{DataSource: "orders_ds", Topic: "orders", Partition: 0, Offset: 10, Error: "invalid character 'x'\nlooking for value", Message: []byte(`{x}`)},
		{DataSource: "orders_ds", Topic: "orders", Partition: 1, Offset: 11, Error: "missing timestamp", Message: []byte(longMessage)},
		{DataSource: "orders_ds", Topic: "orders", Partition: 0, Offset: 12, Error: "invalid UTF-8", Message: notUTF8},
		{DataSource: "orders_ds", Topic: "orders", Partition: 2, Offset: 13, Error: "too big", Message: hugeMessage},
	}
)

// parseErrorsDB is specsDB with four saved parse errors of supervisor
// orders, and a spec of supervisor quiet, which saved none.
func parseErrorsDB(t *testing.T) string {
	t.Helper()
	url := specsDB(t)
	pool, err := pgxpool.New(context.Background(), url)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	s := pgstore.New(pool)
	ctx := context.Background()
	require.NoError(t, s.SaveParseErrors(ctx, "orders", savedErrors, 10))
	_, _, err = s.RecordSpec(ctx, "quiet", json.RawMessage(`{"id": "quiet", "dataSchema": {"dataSource": "quiet_ds"}}`))
	require.NoError(t, err)
	_, _, err = s.RecordSpec(ctx, "saver", json.RawMessage(`{"id": "saver", "tuningConfig": {"maxSavedParseExceptions": 5}}`))
	require.NoError(t, err)
	return url
}

func TestParseErrorsText(t *testing.T) {
	t.Parallel()
	url := parseErrorsDB(t)

	r := runCLI(t, runOpts{}, "parse-errors", "orders", "--database-url", url)
	require.Equal(t, ExitOK, r.code, r.stderr)
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	require.Len(t, lines, 5, r.stdout)
	assert.Regexp(t, `^TIME +PARTITION +OFFSET +ERROR +MESSAGE$`, lines[0])
	ts := `\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`
	// Latest first; errors on one line; messages quoted, cut to 80
	// characters and marked when cut.
	assert.Regexp(t, `^`+ts+` +2 +13 +too big +"\{\\"blob\\": \\"(\\x00){70}"… \(first 65536 bytes saved\)$`, lines[1])
	assert.Regexp(t, `^`+ts+` +0 +12 +invalid UTF-8 +"\{\\xff\\xfe\}"$`, lines[2])
	assert.Regexp(t, `^`+ts+` +1 +11 +missing timestamp +"\{\\"id\\": 1, \\"note\\": \\"é{61}"… \(221 bytes\)$`, lines[3])
	assert.Regexp(t, `^`+ts+` +0 +10 +invalid character 'x' looking for value +"\{x\}"$`, lines[4])

	r = runCLI(t, runOpts{}, "parse-errors", "orders", "--database-url", url, "--limit", "2")
	require.Equal(t, ExitOK, r.code, r.stderr)
	lines = strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	require.Len(t, lines, 4, r.stdout)
	assert.Contains(t, lines[1], "too big")
	assert.Contains(t, lines[2], "invalid UTF-8")
	assert.Equal(t, "the latest 2 of 4 saved; --limit 0 shows all", lines[3])

	r = runCLI(t, runOpts{}, "parse-errors", "orders", "--database-url", url, "--limit", "0")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Len(t, strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n"), 5, r.stdout)
}

func TestParseErrorsJSON(t *testing.T) {
	t.Parallel()
	url := parseErrorsDB(t)

	r := runCLI(t, runOpts{env: map[string]string{"DATABASE_URL": url}}, "parse-errors", "orders", "-o", "json")
	require.Equal(t, ExitOK, r.code, r.stderr)
	var got []parseErrorRecord
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &got))
	require.Len(t, got, 4)
	for i, want := range []pgstore.ParseError{savedErrors[3], savedErrors[2], savedErrors[1], savedErrors[0]} {
		g := got[i]
		assert.Equal(t, "orders", g.SupervisorID)
		assert.Equal(t, want.DataSource, g.DataSource)
		assert.Equal(t, want.Topic, g.Topic)
		assert.Equal(t, want.Partition, g.Partition)
		assert.Equal(t, want.Offset, g.Offset)
		assert.Equal(t, want.Error, g.Error)
		assert.False(t, g.CreatedAt.IsZero())
	}
	assert.Equal(t, encodingUTF8, got[0].MessageEncoding)
	assert.Equal(t, string(hugeMessage[:65536]), got[0].Message, "saved cut")
	assert.True(t, got[0].Truncated)
	assert.Equal(t, encodingBase64, got[1].MessageEncoding)
	assert.Equal(t, base64.StdEncoding.EncodeToString(notUTF8), got[1].Message)
	assert.False(t, got[1].Truncated)
	assert.Equal(t, encodingUTF8, got[2].MessageEncoding)
	assert.Equal(t, longMessage, got[2].Message, "json has the whole message")
	assert.Equal(t, `{x}`, got[3].Message)

	// The field names.
	var raw []map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &raw))
	assert.Equal(t, map[string]any{
		"supervisorId": "orders", "dataSource": "orders_ds", "topic": "orders", "partition": 0.0, "offset": 12.0,
		"error": "invalid UTF-8", "message": "e//+fQ==", "messageEncoding": "base64", "truncated": false,
		"createdAt": raw[1]["createdAt"],
	}, raw[1])

	r = runCLI(t, runOpts{}, "parse-errors", "orders", "--database-url", url, "--limit", "1", "-o", "json")
	require.Equal(t, ExitOK, r.code, r.stderr)
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &got))
	require.Len(t, got, 1)
	assert.Equal(t, int64(13), got[0].Offset)
}

func TestParseErrorsNoneSaved(t *testing.T) {
	t.Parallel()
	url := parseErrorsDB(t)

	// A known supervisor (it has a spec) that saved nothing: no error, and a
	// hint when its spec saves none.
	r := runCLI(t, runOpts{}, "parse-errors", "quiet", "--database-url", url)
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Equal(t, "no parse errors saved for supervisor quiet (its spec saves none: set tuningConfig.maxSavedParseExceptions)\n", r.stdout)
	r = runCLI(t, runOpts{}, "parse-errors", "saver", "--database-url", url)
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.Equal(t, "no parse errors saved for supervisor saver\n", r.stdout)
	r = runCLI(t, runOpts{}, "parse-errors", "quiet", "--database-url", url, "-o", "json")
	require.Equal(t, ExitOK, r.code, r.stderr)
	assert.JSONEq(t, `[]`, r.stdout)
}

func TestParseErrorsOfUnknownSupervisorExits3(t *testing.T) {
	t.Parallel()
	url := parseErrorsDB(t)
	r := runCLI(t, runOpts{dial: client.DialContext}, "parse-errors", "nobody", "--database-url", url, "--address", "127.0.0.1:1")
	assert.Equal(t, ExitNotFound, r.code, r.stderr)
	assert.Contains(t, r.stderr, `no supervisor "nobody"`)
	assert.Empty(t, r.stdout)
}

func TestParseErrorsUsageErrorsExit2(t *testing.T) {
	t.Parallel()
	url := "postgres://u:p@127.0.0.1:1/db" // never reached
	for _, args := range [][]string{
		{"parse-errors", "--database-url", url},
		{"parse-errors", "a", "b", "--database-url", url},
		{"parse-errors", "orders"}, // no database URL
		{"parse-errors", "orders", "--database-url", url, "--limit", "-1"},
		{"parse-errors", "orders", "--database-url", url, "--limit", "x"},
	} {
		r := runCLI(t, runOpts{}, args...)
		assert.Equal(t, ExitUsage, r.code, "starter %v: stderr %s", args, r.stderr)
		assert.Contains(t, r.stderr, "starter parse-errors --help", "starter %v", args)
		assert.Empty(t, r.stdout, "starter %v", args)
	}
}

func TestPreviewMessage(t *testing.T) {
	t.Parallel()
	assert.Equal(t, `"a\tb\n"`, previewMessage([]byte("a\tb\n"), false))
	assert.Equal(t, `"`+strings.Repeat("x", 80)+`"`, previewMessage([]byte(strings.Repeat("x", 80)), false))
	assert.Equal(t, `"`+strings.Repeat("x", 80)+`"… (81 bytes)`, previewMessage([]byte(strings.Repeat("x", 81)), false))
	assert.Equal(t, `"`+strings.Repeat("世", 80)+`"… (243 bytes)`, previewMessage([]byte(strings.Repeat("世", 81)), false))
	assert.Equal(t, `"abc"… (first 3 bytes saved)`, previewMessage([]byte("abc"), true))
	assert.Equal(t, `"\xff"`, previewMessage([]byte{0xff}, false))
}
