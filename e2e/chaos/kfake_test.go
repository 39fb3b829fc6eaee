package chaos

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

// kfakeProc is the broker run as a process of its own (cmd/kfake), so that
// it can be frozen with SIGSTOP or started late. Its data lives in its
// memory: it must not be restarted within a scenario.
type kfakeProc struct {
	*proc
	addr string
}

// kfakeAddr picks the fixed address a scenario's broker will listen on.
func kfakeAddr(t *testing.T) string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(freePort(t)))
}

// startKfake starts the broker on addr with topic and waits until it says
// it is ready.
func startKfake(t *testing.T, addr, topic string, partitions int32) *kfakeProc {
	t.Helper()
	k := &kfakeProc{
		proc: startProc(t, t.TempDir(), "kfake", kfakeBin,
			[]string{"-addr", addr, "-topic", fmt.Sprintf("%s:%d", topic, partitions)}, nil),
		addr: addr,
	}
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(k.logTail(4096), "ready ") {
		if k.exited() || time.Now().After(deadline) {
			t.Fatalf("kfake on %s not ready (exited: %v):\n%s", addr, k.exited(), k.logTail(4096))
		}
		time.Sleep(20 * time.Millisecond)
	}
	return k
}
