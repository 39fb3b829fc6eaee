// Command kfake runs the in-process Kafka broker of internal/kafkadev as a
// process of its own, so that a test can freeze it (SIGSTOP), resume it
// (SIGCONT) or start it late. It listens on -addr, creates each -topic
// name:partitions, prints "ready <addr>" on stdout and runs until SIGTERM or
// SIGINT.
//
//	kfake -addr 127.0.0.1:19092 -topic events:4 -topic other:1
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"handoff/internal/kafkadev"
)

type topicsFlag map[string]int32

func (t topicsFlag) String() string { return fmt.Sprint(map[string]int32(t)) }

func (t topicsFlag) Set(s string) error {
	name, n, ok := strings.Cut(s, ":")
	if !ok {
		return fmt.Errorf("want name:partitions, got %q", s)
	}
	p, err := strconv.ParseInt(n, 10, 32)
	if err != nil || p < 1 {
		return fmt.Errorf("topic %s: want a partition count of 1 or more, got %q", name, n)
	}
	t[name] = int32(p)
	return nil
}

func main() {
	topics := topicsFlag{}
	addr := flag.String("addr", "127.0.0.1:9092", "host:port to listen on")
	flag.Var(topics, "topic", "name:partitions of a topic to create (repeatable)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	b, err := kafkadev.Start(ctx, *addr, topics)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kfake:", err)
		os.Exit(1)
	}
	fmt.Println("ready", strings.Join(b.Addrs(), ","))
	<-ctx.Done()
	b.Close()
}
