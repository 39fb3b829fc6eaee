package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"handoff/internal/eventgen"
	"handoff/internal/redact"
)

const (
	// produceDeliveryTimeout fails a message Kafka has not acknowledged in
	// time, so a dead broker ends produce instead of hanging it.
	produceDeliveryTimeout = time.Minute
	// produceFlushTimeout bounds the wait for acknowledgements once sending
	// stops (also after Ctrl-C).
	produceFlushTimeout = 10 * time.Second
	// runIDLayout makes the default run id of --generate from the time.
	runIDLayout = "20060102T150405.000Z"
)

func (a *app) produceCommand() *cobra.Command {
	var (
		topic, file, runID string
		brokers            []string
		generate           int64
		rate               float64
		partitions         int32
		allowInvalid       bool
	)
	cmd := &cobra.Command{
		Use:   "produce --topic T (-f FILE | --generate N) [--rate R] [--partitions P]",
		Short: "Send JSON messages (a JSONL file, or generated sample events) to a Kafka topic",
		Long: `produce sends messages to a Kafka topic, to try a supervisor out: each line of
a JSONL file (-f, - for stdin; blank lines are skipped), or N generated sample
wiki-edit events (--generate; fields id, ts, page, user, country, action and
delta; ids <run id>-0 to <run id>-<N-1>, the run id from --run-id or else the
time). Messages have no key and go round-robin over the partitions. It
prints how many messages Kafka acknowledged.

A line that is not valid JSON is an error naming its line number (exit 1):
the lines before it were sent, nothing after it is. --allow-invalid sends
such lines anyway, with a warning on stderr, to see what a supervisor makes
of bad input.

TLS and SASL come from the environment, as for the worker: KAFKA_TLS,
KAFKA_TLS_CA_FILE, KAFKA_TLS_CERT_FILE and KAFKA_TLS_KEY_FILE (mutual TLS),
KAFKA_TLS_SERVER_NAME, KAFKA_TLS_INSECURE_SKIP_VERIFY, KAFKA_SASL_MECHANISM
(PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512), KAFKA_SASL_USERNAME and
KAFKA_SASL_PASSWORD.

The topic must exist, unless --partitions P is given: then produce creates it
with P partitions if it is missing. --rate R sends at most R messages a
second (default: as fast as Kafka takes them).`,
		Example: `  starter produce --topic orders -f events.jsonl
  starter produce --topic wiki --generate 10000 --rate 500 --partitions 4
  jq -c '.[]' events.json | starter produce --topic orders -f - --brokers kafka:9092
  starter produce --topic orders -f bad.jsonl --allow-invalid -o json`,
		Args: cobra.NoArgs,
		RunE: a.action(func(cmd *cobra.Command, _ []string) error {
			fs := cmd.Flags()
			seeds := cleanBrokers(brokers)
			switch {
			case strings.TrimSpace(topic) == "":
				return usageErrorf("--topic is empty")
			case fs.Changed("file") && fs.Changed("generate"):
				return usageErrorf("give -f or --generate, not both")
			case !fs.Changed("file") && !fs.Changed("generate"):
				return usageErrorf("give -f FILE (JSONL, - for stdin) or --generate N (sample events)")
			case fs.Changed("generate") && generate < 1:
				return usageErrorf("--generate %d: want 1 or more events", generate)
			case !(rate >= 0) || math.IsInf(rate, 0):
				return usageErrorf("--rate %v: want messages per second, 0 (as fast as possible) or more", rate)
			case fs.Changed("partitions") && partitions < 1:
				return usageErrorf("--partitions %d: want 1 or more", partitions)
			case fs.Changed("run-id") && !fs.Changed("generate"):
				return usageErrorf("--run-id needs --generate")
			case allowInvalid && fs.Changed("generate"):
				return usageErrorf("--allow-invalid applies to -f: generated events are valid JSON")
			case len(seeds) == 0:
				return usageErrorf("no brokers: set --brokers or KAFKA_BROKERS")
			}
			where := brokersText(seeds)
			security, sasl, err := a.kafkaSecurity()
			if err != nil {
				return err
			}
			cl, err := kgo.NewClient(append([]kgo.Opt{
				kgo.SeedBrokers(seeds...),
				kgo.DefaultProduceTopic(topic),
				kgo.RecordPartitioner(kgo.RoundRobinPartitioner()),
				kgo.RecordDeliveryTimeout(produceDeliveryTimeout),
			}, security...)...)
			if err != nil {
				return usageErrorf("--brokers %s: %v", where, redact.Error(err))
			}
			defer cl.Close()

			ctx := cmd.Context()
			res := produceResult{Topic: topic}
			if res.CreatedPartitions, err = a.ensureTopic(ctx, cl, topic, partitions, where); err != nil {
				return saslHint(err, sasl)
			}
			if fs.Changed("generate") {
				if runID == "" {
					runID = a.now().UTC().Format(runIDLayout)
				}
				res.RunID = runID
				// Through cl, so that generated events take the same TLS and SASL.
				res.Sent, err = produceGenerated(ctx, cl, eventgen.New(runID, 0), topic, rate, generate)
				if err != nil {
					return fmt.Errorf("%w (%d acknowledged)", redact.Error(err), res.Sent)
				}
				return a.out.print(res)
			}

			in, name := a.io.Stdin, "stdin"
			if file != "-" {
				f, err := os.Open(file)
				if err != nil {
					return fmt.Errorf("read messages: %w", err)
				}
				defer f.Close()
				in, name = f, file
			}
			res.Sent, res.Invalid, err = a.produceLines(ctx, cl, in, name, topic, rate, allowInvalid)
			if err != nil {
				return err
			}
			return a.out.print(res)
		}),
	}
	fs := cmd.Flags()
	fs.StringVar(&topic, "topic", "", "Kafka topic to send to")
	_ = cmd.MarkFlagRequired("topic")
	fs.StringSliceVar(&brokers, "brokers", []string{"localhost:9092"}, "comma-separated Kafka bootstrap brokers")
	bindEnv(fs, "brokers", "KAFKA_BROKERS")
	fs.StringVarP(&file, "file", "f", "", "JSONL file of messages, one a line (- for stdin)")
	fs.Int64Var(&generate, "generate", 0, "send N generated sample events instead of a file")
	fs.StringVar(&runID, "run-id", "", "prefix of the generated event ids (default: the time)")
	fs.Float64Var(&rate, "rate", 0, "messages per second (0: as fast as Kafka takes them)")
	fs.Int32Var(&partitions, "partitions", 0, "create the topic with P partitions if it is missing")
	fs.BoolVar(&allowInvalid, "allow-invalid", false, "send lines that are not valid JSON too, to try bad input")
	return cmd
}

// cleanBrokers drops blanks around and between the brokers.
func cleanBrokers(brokers []string) []string {
	var out []string
	for _, b := range brokers {
		for _, s := range strings.Split(b, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

// brokersText names the brokers for messages, without passwords.
func brokersText(brokers []string) string {
	s := make([]string, len(brokers))
	for i, b := range brokers {
		s[i] = redact.Userinfo(b)
	}
	return strings.Join(s, ",")
}

// ensureTopic checks that topic exists and, when it does not and partitions
// is set, creates it with that many partitions, which it returns (0: the
// topic was there).
func (a *app) ensureTopic(ctx context.Context, cl *kgo.Client, topic string, partitions int32, where string) (int32, error) {
	mctx, cancel := context.WithTimeout(ctx, a.dialTimeout)
	defer cancel()
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(mctx, cl)
	switch {
	case ctx.Err() != nil:
		return 0, ctx.Err()
	case err != nil:
		return 0, fmt.Errorf("cannot reach Kafka at %s (set --brokers or KAFKA_BROKERS): %w", where, redact.Error(err))
	case len(resp.Topics) != 1:
		return 0, fmt.Errorf("metadata of topic %s from %s: %d topics in the answer, want 1", topic, where, len(resp.Topics))
	}
	t := resp.Topics[0]
	terr := kerr.ErrorForCode(t.ErrorCode)
	switch {
	case terr == nil:
		if partitions > 0 && int32(len(t.Partitions)) != partitions {
			fmt.Fprintf(a.io.Stderr, "topic %s exists with %s: --partitions %d changes nothing\n", topic, plural(len(t.Partitions), "partition"), partitions)
		}
		return 0, nil
	case !errors.Is(terr, kerr.UnknownTopicOrPartition):
		return 0, fmt.Errorf("metadata of topic %s from %s: %w", topic, where, terr)
	case partitions == 0:
		return 0, fmt.Errorf("topic %s does not exist on %s: create it, or pass --partitions P to create it with P partitions", topic, where)
	}

	creq := kmsg.NewPtrCreateTopicsRequest()
	ct := kmsg.NewCreateTopicsRequestTopic()
	ct.Topic, ct.NumPartitions, ct.ReplicationFactor = topic, partitions, -1 // the broker's default replication
	creq.Topics = append(creq.Topics, ct)
	creq.TimeoutMillis = int32(a.dialTimeout.Milliseconds())
	cctx, cancel := context.WithTimeout(ctx, a.dialTimeout)
	defer cancel()
	cresp, err := creq.RequestWith(cctx, cl)
	switch {
	case err != nil:
		return 0, fmt.Errorf("create topic %s on %s: %w", topic, where, redact.Error(err))
	case len(cresp.Topics) != 1:
		return 0, fmt.Errorf("create topic %s on %s: %d topics in the answer, want 1", topic, where, len(cresp.Topics))
	}
	created := cresp.Topics[0]
	cerr := kerr.ErrorForCode(created.ErrorCode)
	switch {
	case errors.Is(cerr, kerr.TopicAlreadyExists): // created meanwhile by someone else
		return 0, nil
	case cerr != nil && created.ErrorMessage != nil:
		return 0, fmt.Errorf("create topic %s with %s on %s: %w: %s", topic, plural(int(partitions), "partition"), where, cerr, *created.ErrorMessage)
	case cerr != nil:
		return 0, fmt.Errorf("create topic %s with %s on %s: %w", topic, plural(int(partitions), "partition"), where, cerr)
	}
	return partitions, nil
}

// jsonLine is one line of the input, numbered from 1, without its end of
// line; err is set on the last one read.
type jsonLine struct {
	n    int
	data []byte
	err  error
}

// readLines sends the lines of r to the returned channel until r ends or
// fails, or stop closes. It reads in its own goroutine so that Ctrl-C ends
// produce even while stdin has nothing to read.
func readLines(r io.Reader, stop <-chan struct{}) <-chan jsonLine {
	lines := make(chan jsonLine)
	go func() {
		defer close(lines)
		br := bufio.NewReaderSize(r, 64<<10)
		for n := 1; ; n++ {
			data, err := br.ReadBytes('\n')
			data = bytes.TrimRight(data, "\r\n")
			if len(data) == 0 && err == io.EOF {
				return
			}
			select {
			case lines <- jsonLine{n: n, data: data, err: err}:
			case <-stop:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return lines
}

// produceLines sends each non-blank line of r as a message, at most rate a
// second (0: no limit), and returns how many were acknowledged and how many
// of the lines sent were not valid JSON (only with allowInvalid: otherwise
// such a line ends produce with an error, and nothing after it is sent).
func (a *app) produceLines(ctx context.Context, cl *kgo.Client, r io.Reader, name, topic string, rate float64, allowInvalid bool) (sent, invalid int64, err error) {
	stop := make(chan struct{})
	defer close(stop)
	lines := readLines(r, stop)
	var acks eventgen.Acks
	start := time.Now()
	var n int64 // messages handed to the client
	var stopErr error
send:
	for {
		var l jsonLine
		var ok bool
		select {
		case <-ctx.Done():
			break send
		case l, ok = <-lines:
			if !ok {
				break send
			}
		}
		if len(bytes.TrimSpace(l.data)) > 0 {
			if !json.Valid(l.data) {
				jerr := json.Unmarshal(l.data, new(json.RawMessage))
				if !allowInvalid {
					stopErr = fmt.Errorf("%s line %d is not valid JSON (%v): nothing after it was sent (--allow-invalid sends such lines anyway)", name, l.n, jerr)
					break send
				}
				invalid++
				fmt.Fprintf(a.io.Stderr, "%s line %d is not valid JSON (%v): sending it anyway (--allow-invalid)\n", name, l.n, jerr)
			}
			if eventgen.Pace(ctx, start, rate, n) != nil || acks.Failed() {
				break send
			}
			cl.Produce(ctx, &kgo.Record{Value: l.data}, acks.Done)
			n++
		}
		if l.err != nil {
			if l.err != io.EOF {
				stopErr = fmt.Errorf("read %s after line %d: %w", name, l.n-1, l.err)
			}
			break send
		}
	}

	flushCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), produceFlushTimeout)
	defer cancel()
	flushErr := cl.Flush(flushCtx)
	sent = acks.Sent()
	switch {
	case acks.Failed():
		return sent, invalid, fmt.Errorf("produce to %s: %w (%d of %d acknowledged)", topic, redact.Error(acks.Err()), sent, n)
	case stopErr != nil:
		return sent, invalid, fmt.Errorf("%w; %d before it acknowledged", stopErr, sent)
	case flushErr != nil:
		return sent, invalid, fmt.Errorf("produce to %s: wait for acknowledgements: %w (%d of %d acknowledged)", topic, flushErr, sent, n)
	case ctx.Err() != nil:
		return sent, invalid, fmt.Errorf("produce to %s: interrupted after %d acknowledged: %w", topic, sent, ctx.Err())
	}
	return sent, invalid, nil
}

type produceResult struct {
	Topic string `json:"topic"`
	// Sent is how many messages Kafka acknowledged.
	Sent  int64  `json:"sent"`
	RunID string `json:"runId,omitempty"`
	// Invalid counts the lines sent that were not valid JSON (--allow-invalid).
	Invalid int64 `json:"invalid,omitempty"`
	// CreatedPartitions is set when produce created the topic.
	CreatedPartitions int32 `json:"createdPartitions,omitempty"`
}

func (r produceResult) writeText(w io.Writer) error {
	if r.CreatedPartitions > 0 {
		fmt.Fprintf(w, "created topic %s with %s\n", r.Topic, plural(int(r.CreatedPartitions), "partition"))
	}
	var err error
	switch {
	case r.RunID != "" && r.Sent > 0:
		_, err = fmt.Fprintf(w, "%s acknowledged by topic %s (run id %s: event ids %s-0 to %s-%d)\n",
			plural(int(r.Sent), "generated event"), r.Topic, r.RunID, r.RunID, r.RunID, r.Sent-1)
	case r.Invalid > 0:
		_, err = fmt.Fprintf(w, "%s acknowledged by topic %s (%d not valid JSON, sent with --allow-invalid)\n",
			plural(int(r.Sent), "message"), r.Topic, r.Invalid)
	default:
		_, err = fmt.Fprintf(w, "%s acknowledged by topic %s\n", plural(int(r.Sent), "message"), r.Topic)
	}
	return err
}
