package pgcluster

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
)

const binRoot = "/usr/lib/postgresql"

// initializedMarker is written after initdb succeeds, so that a data
// directory left half-built by a killed initdb is rebuilt, not reused.
const initializedMarker = "initdb.done"

func dataDir(dir string) string { return filepath.Join(dir, "data") }

// findBinDir returns the bin directory of the newest installed major version.
func findBinDir() (string, error) {
	matches, _ := filepath.Glob(filepath.Join(binRoot, "*", "bin", "postgres"))
	if len(matches) == 0 {
		return "", fmt.Errorf("PostgreSQL server binaries not found under %s: apt-get install postgresql (or set Options.BinDir)", binRoot)
	}
	version := func(p string) float64 {
		v, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(filepath.Dir(p))), 64)
		return v
	}
	sort.Slice(matches, func(i, j int) bool { return version(matches[i]) > version(matches[j]) })
	return filepath.Dir(matches[0]), nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pick a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// checkSocketPath fails early on a Dir too long for a unix socket path
// (sun_path holds 107 bytes), which postgres reports only in its log.
func checkSocketPath(dir string, port int) error {
	sock := filepath.Join(dir, fmt.Sprintf(".s.PGSQL.%d", port))
	if len(sock) > 107 {
		return fmt.Errorf("pgcluster dir %s is too long for a unix socket path (%d > 107 bytes): use a shorter Dir, e.g. under /tmp", dir, len(sock))
	}
	return nil
}

// prepareDir creates dir and hands it to the user postgres runs as.
func prepareDir(dir string, run runAs) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create pgcluster dir: %w", err)
	}
	if run.cred == nil {
		return nil
	}
	if err := chownTree(dir, int(run.cred.Uid), int(run.cred.Gid)); err != nil {
		return err
	}
	return run.checkReachable(dir)
}

// initdb creates the cluster unless a complete one is already there.
func initdb(ctx context.Context, bin, dir string, run runAs) error {
	marker := filepath.Join(dir, initializedMarker)
	if _, err := os.Stat(marker); err == nil {
		return nil
	}
	if err := os.RemoveAll(dataDir(dir)); err != nil {
		return fmt.Errorf("remove half-initialized data dir: %w", err)
	}
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "initdb"),
		"-D", dataDir(dir), "-U", "postgres", "--auth=trust",
		"--encoding=UTF8", "--locale=C", "--no-sync")
	cmd.Dir = dir
	cmd.SysProcAttr = run.sysProcAttr()
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("initdb in %s: %w\n%s", dir, err, out)
	}
	if err := os.WriteFile(marker, nil, 0o644); err != nil {
		return fmt.Errorf("mark cluster initialized: %w", err)
	}
	return nil
}
