package parse

import (
	"fmt"
	"strconv"
	"strings"
)

// step is one step of a flattenSpec path: a member key, or with index >= 0
// an array element.
type step struct {
	key   string
	index int
}

// compilePath reads the JSONPath subset flattenSpec accepts: $ followed by
// .name, ['name'] or [index] steps.
func compilePath(expr string) ([]step, error) {
	bad := func(why string) error {
		return fmt.Errorf("%q: %s: want a path such as $.user.name, $.tags[0] or $['odd key']", expr, why)
	}
	rest, ok := strings.CutPrefix(expr, "$")
	if !ok {
		return nil, bad("no leading $")
	}
	var steps []step
	for rest != "" {
		switch {
		case rest[0] == '.':
			end := strings.IndexAny(rest[1:], ".[")
			if end < 0 {
				end = len(rest) - 1
			}
			if end == 0 {
				return nil, bad("empty name after '.'")
			}
			steps = append(steps, step{key: rest[1 : 1+end], index: -1})
			rest = rest[1+end:]
		case strings.HasPrefix(rest, "['"):
			end := strings.Index(rest[2:], "']")
			if end < 0 {
				return nil, bad("no closing ']")
			}
			steps = append(steps, step{key: rest[2 : 2+end], index: -1})
			rest = rest[2+end+2:]
		case rest[0] == '[':
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				return nil, bad("no closing ]")
			}
			n, err := strconv.Atoi(rest[1:end])
			if err != nil || n < 0 || rest[1] == '+' {
				return nil, bad("an index must be a whole number from 0")
			}
			steps = append(steps, step{index: n})
			rest = rest[end+1:]
		default:
			return nil, bad(fmt.Sprintf("unexpected %q", rest[0]))
		}
	}
	if len(steps) == 0 {
		return nil, bad("no steps")
	}
	return steps, nil
}

// follow walks steps from f; a step that does not resolve gives a missing
// field.
func follow(f field, steps []step) field {
	for _, st := range steps {
		switch {
		case st.index >= 0 && f.kind == kindArray:
			f = element(f.text, st.index)
		case st.index < 0 && f.kind == kindObject:
			f = member(f.text, st.key)
		default:
			return field{}
		}
	}
	return f
}

// member returns the value of key in a validated object (the last one, as
// encoding/json would, if the key repeats).
func member(obj, key string) field {
	sc := scanner{s: obj, i: 1}
	var found field
	for sc.ws(); sc.i < len(sc.s) && sc.s[sc.i] == '"'; sc.ws() {
		start := sc.i
		k, esc, err := sc.str()
		if err != nil {
			return field{}
		}
		if esc {
			k = unescape(sc.s[start:sc.i])
		}
		sc.ws()
		sc.i++ // ':'
		sc.ws()
		v, err := sc.value(1)
		if err != nil {
			return field{}
		}
		if k == key {
			found = v
		}
		sc.ws()
		sc.i++ // ',' or '}'
	}
	return found
}

// element returns element n of a validated array.
func element(arr string, n int) field {
	sc := scanner{s: arr, i: 1}
	sc.ws()
	for i := 0; sc.i < len(sc.s) && sc.s[sc.i] != ']'; i++ {
		v, err := sc.value(1)
		if err != nil {
			return field{}
		}
		if i == n {
			return v
		}
		sc.ws()
		sc.i++ // ','
		sc.ws()
	}
	return field{}
}
