package parse

import (
	"strings"
	"unicode/utf8"
)

// keyCache resolves the direct path's keys (direct.go) to the slots they
// feed. Each distinct plain spelling of a key (no escapes, valid UTF-8)
// is looked up once, when first seen, and listed with its slot; the
// spelling found at each member position of a message is tried first at
// that position in the next, by comparing its bytes and the closing
// quote with the message's. A producer writes its keys in one order, so
// past the first message a key costs that comparison: it is neither
// scanned nor looked up. Other keys are scanned and looked up as the
// general path does (members, setTop).
//
// Layout: names[i] is a spelling (the parser's own copy), slots[i] its
// slot (-1: the spec does not read it); index maps a spelling to i; at[k]
// is the i of the key at member position k of the last message (-1:
// none, or not a listed spelling).
type keyCache struct {
	names  []string
	slots  []int
	index  map[string]int
	at     []int
	lookup func(string) (keyInfo, bool)
}

// Bounds: messages of ever-new keys (ids as keys) must not grow the
// cache without end; past them a key is looked up each time.
const (
	maxKeySpellings = 1024
	maxKeyPositions = 256
)

func (c *keyCache) init(lookup func(string) (keyInfo, bool)) {
	c.index, c.lookup = map[string]int{}, lookup
}

// resolve reads the key at sc.i (its opening quote), member pos of its
// object, and returns its slot (-1: not read); ok is false if the key is
// not a valid JSON string.
func (c *keyCache) resolve(sc *scanner, pos int) (slot int, ok bool) {
	if pos < len(c.at) {
		if i := c.at[pos]; i >= 0 {
			name := c.names[i]
			end := sc.i + 1 + len(name)
			if end < len(sc.s) && sc.s[end] == '"' && sc.s[sc.i+1:end] == name {
				sc.i = end + 1
				return c.slots[i], true
			}
		}
	}
	start := sc.i
	key, esc, err := sc.str()
	if err != nil {
		return 0, false
	}
	if esc || !utf8.ValidString(key) {
		// As members and setTop (whose check of the key the direct path
		// always makes) read it; not listed.
		if esc {
			key = unescape(sc.s[start:sc.i])
		}
		if !utf8.ValidString(key) {
			key = strings.ToValidUTF8(key, "\uFFFD")
		}
		c.remember(pos, -1)
		return c.slotOf(key), true
	}
	i, listed := c.index[key]
	if !listed {
		if len(c.names) >= maxKeySpellings {
			c.remember(pos, -1)
			return c.slotOf(key), true
		}
		i = len(c.names)
		key = strings.Clone(key) // key is a view into the message
		c.names, c.slots = append(c.names, key), append(c.slots, c.slotOf(key))
		c.index[key] = i
	}
	c.remember(pos, i)
	return c.slots[i], true
}

func (c *keyCache) slotOf(key string) int {
	if ki, ok := c.lookup(key); ok {
		return ki.slot
	}
	return -1
}

// remember notes spelling i (-1: none) at member position pos.
func (c *keyCache) remember(pos, i int) {
	if pos >= maxKeyPositions {
		return
	}
	for len(c.at) <= pos {
		c.at = append(c.at, -1)
	}
	c.at[pos] = i
}
