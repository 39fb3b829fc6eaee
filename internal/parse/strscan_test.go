package parse

import (
	"math/rand/v2"
	"testing"
)

// skipPlain finds what a byte-by-byte scan finds, wherever the byte that
// stops it lies in a word, and whatever bytes (UTF-8, 0x7F, 0xFF) come
// before or after it.
func TestSkipPlainIsByteByByte(t *testing.T) {
	slow := func(s string, i int) int {
		for ; i < len(s); i++ {
			if c := s[i]; c < 0x20 || c == '"' || c == '\\' {
				return i
			}
		}
		return i
	}
	alphabet := []byte{'a', 'Z', ' ', '!', '#', '[', ']', 0x7F, 0x80, 0xC3, 0xA9, 0xFF, '"', '\\', 0, 0x1F, '\n', 0x21, 0x5B, 0x5D}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200_000 {
		b := make([]byte, r.IntN(40))
		for i := range b {
			if r.IntN(6) == 0 {
				b[i] = alphabet[r.IntN(len(alphabet))]
			} else {
				b[i] = alphabet[r.IntN(12)] // no stopping byte
			}
		}
		s := string(b)
		i := 0
		if len(s) > 0 {
			i = r.IntN(len(s) + 1)
		}
		if got, want := skipPlain(s, i), slow(s, i); got != want {
			t.Fatalf("skipPlain(%q, %d) = %d, want %d", s, i, got, want)
		}
	}
}
