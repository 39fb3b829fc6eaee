package kafka

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	kafkago "github.com/segmentio/kafka-go"
)

// Real Kafka refuses wrong SASL credentials with an error code, which
// kfake (tested in security_test.go) does not send.
func TestExplainSASLRefusal(t *testing.T) {
	a := auth{mechanism: SASLScramSHA256, username: "handoff"}
	err := a.explain(fmt.Errorf("metadata: %w", kafkago.SASLAuthenticationFailed))
	if !errors.Is(err, kafkago.SASLAuthenticationFailed) {
		t.Fatalf("explain hides the cause: %v", err)
	}
	if want := `SASL SCRAM-SHA-256 as user "handoff" refused: check KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD`; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}
	if again := a.explain(fmt.Errorf("fetch: %w", err)); strings.Count(again.Error(), "refused: check") != 1 {
		t.Errorf("explained twice: %v", again)
	}
	if got := a.explain(errors.New("other")); got.Error() != "other" {
		t.Errorf("an unrelated error changed: %v", got)
	}
	if got := (auth{}).explain(io.ErrUnexpectedEOF); !strings.Contains(got.Error(), "set KAFKA_TLS=true") {
		t.Errorf("EOF without TLS does not suggest TLS: %v", got)
	}
	if got := (auth{tls: true}).explain(io.EOF); strings.Contains(got.Error(), "KAFKA_TLS") {
		t.Errorf("EOF with TLS on suggests TLS: %v", got)
	}
}
