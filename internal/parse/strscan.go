package parse

import (
	"encoding/binary"
	"math/bits"
	"unsafe"
)

// skipPlain returns the index of the first byte at or after i that ends
// or interrupts a JSON string's plain run (a quote, a backslash or a
// control character), or len(s). It reads eight bytes at a time: in a
// word, hasByte and hasLess flag each byte that matches; a flag may be
// wrong above a true match (a borrow carries into it), never below, so
// the lowest flag is the first match.
func skipPlain(s string, i int) int {
	b := unsafe.Slice(unsafe.StringData(s), len(s))
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		if m := hasByte(w, '"') | hasByte(w, '\\') | hasLess(w, 0x20); m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c < 0x20 || c == '"' || c == '\\' {
			return i
		}
	}
	return i
}

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// hasLess flags the bytes of w below n (n at most 128) in their high bit.
func hasLess(w uint64, n byte) uint64 { return (w - ones*uint64(n)) &^ w & highs }

// hasByte flags the bytes of w equal to c in their high bit.
func hasByte(w uint64, c byte) uint64 { return hasLess(w^(ones*uint64(c)), 1) }
