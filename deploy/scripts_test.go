package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The Temporal setup scripts run here under sh, with the environment the
// compose file gives them and stand-ins for temporal-sql-tool and the
// temporal CLI that log their arguments.

// stub writes an executable shell script called name into dir.
func stub(t *testing.T, dir, name, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
}

// runScript runs script from deploy/temporal with the service's compose
// environment, the stubs in bin first on PATH, and returns the call log.
func runScript(t *testing.T, service, script, bin string) (log []string, err error) {
	t.Helper()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	logFile := filepath.Join(bin, "calls.log")
	cmd := exec.Command("sh", filepath.Join(repoRoot(t), "deploy", "temporal", script))
	cmd.Env = []string{"PATH=" + bin + ":/usr/bin:/bin", "CALLS=" + logFile}
	for k, v := range env(svc(t, loadCompose(t), service)) {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, err := cmd.CombinedOutput()
	t.Logf("%s:\n%s", script, out)
	b, _ := os.ReadFile(logFile)
	for l := range strings.Lines(string(b)) {
		log = append(log, strings.TrimSpace(l))
	}
	return log, err
}

func TestSetupSchemaScript(t *testing.T) {
	bin := t.TempDir()
	stub(t, bin, "temporal-sql-tool", `[ "$SQL_PASSWORD" = temporal ] || { echo "no password" >&2; exit 1; }
echo "$*" >> "$CALLS"
case "$*" in *"$FAIL_ON"*) [ -n "$FAIL_ON" ] && exit 1;; esac
exit 0
`)
	log, err := runScript(t, "temporal-schema", "setup-schema.sh", bin)
	if err != nil {
		t.Fatal(err)
	}
	base := "--plugin postgres12 --ep temporal-postgres -p 5432 -u temporal --db "
	want := []string{
		base + "temporal create",
		base + "temporal setup-schema -v 0.0",
		base + "temporal update-schema -d /etc/temporal/schema/postgresql/v12/temporal/versioned",
		base + "temporal_visibility create",
		base + "temporal_visibility setup-schema -v 0.0",
		base + "temporal_visibility update-schema -d /etc/temporal/schema/postgresql/v12/visibility/versioned",
	}
	if !slices.Equal(log, want) {
		t.Fatalf("calls:\n%s\nwant:\n%s", strings.Join(log, "\n"), strings.Join(want, "\n"))
	}

	// A failing step fails the one-shot, so the server does not start.
	bin = t.TempDir()
	stub(t, bin, "temporal-sql-tool", `echo "$*" >> "$CALLS"
case "$*" in *"temporal setup-schema"*) exit 1;; esac
`)
	log, err = runScript(t, "temporal-schema", "setup-schema.sh", bin)
	if err == nil || len(log) != 2 {
		t.Fatalf("err = %v after calls %q: want the failure of the second call to stop the script", err, log)
	}
}

// temporalStub answers like the temporal CLI: the cluster is serving, the
// namespace exists when $NS_EXISTS is set, and search-attribute list
// prints a table with the names in $HAVE.
const temporalStub = `echo "$*" >> "$CALLS"
case "$1 $2 $3" in
"operator cluster health") echo SERVING ;;
"operator namespace describe") [ -n "$NS_EXISTS" ] || exit 1 ;;
"operator namespace create") ;;
"operator search-attribute list")
	echo "        Name          Type"
	for n in BuildIds TemporalChangeVersion $HAVE; do echo "  $n  Keyword"; done ;;
"operator search-attribute create") ;;
*) echo "unexpected: $*" >&2; exit 3 ;;
esac
`

func TestSetupNamespaceScript(t *testing.T) {
	addr := "--address temporal:7233 -n default"
	cases := []struct {
		name, have string
		nsExists   bool
		want       []string
	}{
		{"fresh", "", false, []string{
			"operator cluster health --address temporal:7233",
			"operator namespace describe " + addr,
			"operator namespace create " + addr + " --retention 72h",
			"operator search-attribute list " + addr,
			"operator search-attribute create " + addr + " --name Supervisor --type Keyword",
			"operator search-attribute create " + addr + " --name DataSource --type Keyword",
			"operator search-attribute create " + addr + " --name Topic --type Keyword",
			"operator search-attribute create " + addr + " --name SupervisorState --type Keyword",
			"operator search-attribute create " + addr + " --name CompactionState --type Keyword",
		}},
		// SupervisorState is there, Supervisor is not: names match whole.
		{"partly done", "SupervisorState DataSource", true, []string{
			"operator cluster health --address temporal:7233",
			"operator namespace describe " + addr,
			"operator search-attribute list " + addr,
			"operator search-attribute create " + addr + " --name Supervisor --type Keyword",
			"operator search-attribute create " + addr + " --name Topic --type Keyword",
			"operator search-attribute create " + addr + " --name CompactionState --type Keyword",
		}},
		{"done", "Supervisor DataSource Topic SupervisorState CompactionState", true, []string{
			"operator cluster health --address temporal:7233",
			"operator namespace describe " + addr,
			"operator search-attribute list " + addr,
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bin := t.TempDir()
			ns := ""
			if c.nsExists {
				ns = "yes"
			}
			stub(t, bin, "temporal", "HAVE='"+c.have+"'\nNS_EXISTS='"+ns+"'\n"+temporalStub)
			log, err := runScript(t, "temporal-setup", "setup-namespace.sh", bin)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(log, c.want) {
				t.Fatalf("calls:\n%s\nwant:\n%s", strings.Join(log, "\n"), strings.Join(c.want, "\n"))
			}
		})
	}
}

func TestSetupNamespaceScriptRetries(t *testing.T) {
	// The first search-attribute create fails, as on a namespace created a
	// moment ago; the script tries again (after its 2 s pause).
	bin := t.TempDir()
	stub(t, bin, "temporal", `echo "$*" >> "$CALLS"
case "$1 $2 $3" in
"operator cluster health") echo SERVING ;;
"operator search-attribute create")
	if [ ! -e "$CALLS.failed" ]; then : > "$CALLS.failed"; exit 1; fi ;;
esac
`)
	log, err := runScript(t, "temporal-setup", "setup-namespace.sh", bin)
	if err != nil {
		t.Fatal(err)
	}
	creates := 0
	for _, l := range log {
		if strings.Contains(l, "search-attribute create") {
			creates++
		}
	}
	if creates != 6 { // one retried, then the other four
		t.Fatalf("%d creates, want 6:\n%s", creates, strings.Join(log, "\n"))
	}
}
