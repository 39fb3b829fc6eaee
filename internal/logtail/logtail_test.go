package logtail

import (
	"strings"
	"testing"
)

func TestBufferKeepsTheEnd(t *testing.T) {
	b := &Buffer{Size: 8}
	if got := b.String(); got != "(empty)" {
		t.Fatalf("empty buffer: %q", got)
	}
	b.Write([]byte("hello "))
	b.Write([]byte("world, again"))
	if got := b.String(); got != "d, again" {
		t.Fatalf("got %q, want the last 8 bytes", got)
	}
	big := &Buffer{}
	big.Write([]byte(strings.Repeat("x", 10_000) + "end"))
	if got := big.String(); len(got) != 4<<10 || !strings.HasSuffix(got, "end") {
		t.Fatalf("default size: kept %d bytes", len(got))
	}
}
