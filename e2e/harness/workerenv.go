package harness

import (
	"strconv"
	"strings"
)

// Worker is where a test's worker process finds its services.
type Worker struct {
	DatabaseURL, TemporalAddress, Namespace string
	Brokers                                 []string
	DeepStorage, StagingDir                 string
	HTTPPort                                int
}

// Env is the worker's environment (NAME=value) for w, logging at info
// and with a 20 s shutdown grace; extra comes last and so wins.
func (w Worker) Env(extra ...string) []string {
	return append([]string{
		"DATABASE_URL=" + w.DatabaseURL,
		"TEMPORAL_ADDRESS=" + w.TemporalAddress,
		"TEMPORAL_NAMESPACE=" + w.Namespace,
		"KAFKA_BROKERS=" + strings.Join(w.Brokers, ","),
		"HANDOFF_DEEP_STORAGE=" + w.DeepStorage,
		"HANDOFF_STAGING_DIR=" + w.StagingDir,
		"HANDOFF_HTTP_ADDR=127.0.0.1:" + strconv.Itoa(w.HTTPPort),
		"HANDOFF_LOG_LEVEL=info",
		"HANDOFF_SHUTDOWN_GRACE=20s",
	}, extra...)
}
