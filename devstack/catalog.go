package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"time"

	"handoff/internal/restcatalog"
)

// catalogURL is where the dev stack's Iceberg REST catalog answers.
var catalogURL = fmt.Sprintf("http://localhost:%d", catalogPort)

// startCatalog runs `starter catalog serve` over the stack's database
// and deep storage, on loopback, with a token made for this run and left
// in .dev/catalog-token (readable by its owner only) for curl and engines.
func (s *stack) startCatalog(ctx context.Context) error {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return fmt.Errorf("catalog token: %w", err)
	}
	token := hex.EncodeToString(b)
	if err := os.WriteFile(s.l.dev("catalog-token"), []byte(token+"\n"), 0o600); err != nil {
		return fmt.Errorf("catalog token: %w", err)
	}
	env := []string{
		"DATABASE_URL=" + s.dbURL,
		"HANDOFF_DEEP_STORAGE=" + s.l.dev("deep"),
		restcatalog.EnvToken + "=" + token,
	}
	p, err := startProc("catalog", s.l.dev("catalog.log"), env, s.l.dev("bin", "starter"),
		"catalog", "serve", "--listen", hostPort(catalogPort))
	if err != nil {
		return err
	}
	s.catalog = p
	s.onStop("catalog", func() error { return p.stop(15 * time.Second) })
	if err := waitTCP(ctx, hostPort(catalogPort), time.Minute, p.done); err != nil {
		return fmt.Errorf("%w; last lines of %s:\n%s", err, p.logPath, tailFile(p.logPath, 20))
	}
	return nil
}
