package parse

// The direct path's scan (direct.go): the message's one object, each
// member's key resolved through the key cache and, when the spec reads
// it, its value kept in the key's slot as a directVal. The grammar is
// the scanner's; the direct scan only says whether the message is valid
// (false: the general path parses it again and says what is wrong).

// scan reads msg's object into d.vals.
func (d *direct) scan(msg string) bool {
	sc := scanner{s: msg}
	sc.ws()
	if sc.i >= len(msg) || msg[sc.i] != '{' {
		return false
	}
	sc.i++
	sc.ws()
	if sc.i < len(msg) && msg[sc.i] == '}' {
		sc.i++
	} else if !d.members(&sc) {
		return false
	}
	sc.ws()
	return sc.i == len(msg)
}

// members reads an object's members, as Parser.members does.
func (d *direct) members(sc *scanner) bool {
	for pos := 0; ; pos++ {
		if !sc.at('"') {
			return false
		}
		slot, ok := d.keys.resolve(sc, pos)
		if !ok || !sc.next(':') || !sc.at(0) {
			return false
		}
		if slot >= 0 {
			ok = sc.directValue(&d.vals[slot])
		} else {
			_, err := sc.value(1)
			ok = err == nil
		}
		switch {
		case !ok:
			return false
		case sc.next(','):
			continue
		}
		return sc.next('}')
	}
}

// next consumes c, after any whitespace. Compact JSON has none, so the
// character is looked at before the whitespace is skipped.
func (sc *scanner) next(c byte) bool {
	if sc.i < len(sc.s) && sc.s[sc.i] == c {
		sc.i++
		return true
	}
	sc.ws()
	if sc.i < len(sc.s) && sc.s[sc.i] == c {
		sc.i++
		return true
	}
	return false
}

// at skips any whitespace and says whether c (0: anything) follows.
func (sc *scanner) at(c byte) bool {
	if sc.i < len(sc.s) && sc.s[sc.i] > ' ' {
		return c == 0 || sc.s[sc.i] == c
	}
	sc.ws()
	return sc.i < len(sc.s) && (c == 0 || sc.s[sc.i] == c)
}

// directValue reads the value at sc.i into v: strings and numbers by
// the scans below, other kinds by value.
func (sc *scanner) directValue(v *directVal) bool {
	if sc.i >= len(sc.s) {
		return false
	}
	start := sc.i
	switch c := sc.s[sc.i]; {
	case c == '"':
		return sc.directString(v)
	case c == '-' || (c >= '0' && c <= '9'):
		n, whole, ok := sc.integer()
		*v = directVal{start: start, end: sc.i, n: n, kind: kindNumber, whole: whole}
		return ok
	}
	f, err := sc.value(1)
	if err != nil {
		return false
	}
	*v = directVal{start: start, end: sc.i, kind: f.kind}
	if f.kind == kindNull {
		v.end = start // null's text is ""
	}
	return true
}

// directString is str for a value kept: it also notes whether the
// content has a byte from 0x80.
func (sc *scanner) directString(v *directVal) bool {
	quote := sc.i
	sc.i++
	start := sc.i
	var or byte
	for sc.i < len(sc.s) {
		c := sc.s[sc.i]
		if c >= 0x20 && c != '"' && c != '\\' {
			or |= c
			sc.i++
			continue
		}
		switch {
		case c == '"':
			sc.i++
			*v = directVal{start: start, end: sc.i - 1, kind: kindString, high: or >= 0x80}
			return true
		case c == '\\':
			// Escapes: the general string scan, its field the quoted JSON.
			sc.i = quote
			if _, _, err := sc.str(); err != nil {
				return false
			}
			*v = directVal{start: quote, end: sc.i, kind: kindString, esc: true}
			return true
		default:
			return false // a control character
		}
	}
	return false
}

// integer reads a JSON number as number does, and its value when it is
// an integer of up to 18 digits (whole): those never overflow an int64,
// and are what strconv.ParseInt reads of the same text.
func (sc *scanner) integer() (n int64, whole, ok bool) {
	start, s := sc.i, sc.s
	i := start
	if s[i] == '-' {
		i++
	}
	first := i
	for ; i < len(s) && s[i]-'0' <= 9; i++ {
		n = n*10 + int64(s[i]-'0')
	}
	digits := i - first
	if digits == 0 || digits > 18 || (digits > 1 && s[first] == '0') ||
		(i < len(s) && (s[i] == '.' || s[i] == 'e' || s[i] == 'E')) {
		return 0, false, sc.number() == nil // any other number: validated, no value
	}
	sc.i = i
	if s[start] == '-' {
		n = -n
	}
	return n, true, true
}
