package parse

// decodedMillis reads a kindTime text in Unix milliseconds. The decoders
// (internal/decode) write instants as RFC 3339 in UTC,
// "2006-01-02T15:04:05[.fraction]Z", and dates as "2006-01-02": those are
// read digit by digit, as a record's time is once per record, and the
// last second read is remembered (a partition's records come in time
// order, many to a second); anything else goes to parseISO, which reads
// it or says why not.
func (p *Parser) decodedMillis(s string) (int64, error) {
	var c *clockCache
	if vs, ok := p.sink.(*valueSink); ok {
		c = &vs.clock
	}
	return c.millis(s)
}

// clockCache is the last second decodedMillis read: its text and its
// first millisecond.
type clockCache struct {
	text [len("2006-01-02T15:04:05")]byte
	ms   int64
	set  bool
}

// millis reads s; a nil c remembers nothing.
func (c *clockCache) millis(s string) (int64, error) {
	const n = len(c.text)
	if c != nil && c.set && len(s) > n && s[:n] == string(c.text[:]) {
		if f, ok := fracMillis(s[n:]); ok {
			return c.ms + f, nil
		}
	}
	if len(s) == len("2006-01-02") {
		if days, ok := date(s); ok {
			return days * 86_400_000, nil
		}
	} else if len(s) > n {
		sec, ok1 := second(s[:n])
		f, ok2 := fracMillis(s[n:])
		if ok1 && ok2 {
			if c != nil {
				copy(c.text[:], s[:n])
				c.ms, c.set = sec*1000, true
			}
			return sec*1000 + f, nil
		}
	}
	return parseISO(s)
}

// date reads "2006-01-02" in days since 1970-01-01; ok is false for
// anything else, or a day that does not exist.
func date(s string) (int64, bool) {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return 0, false
	}
	y, ok1 := digits(s[0:4])
	m, ok2 := digits(s[5:7])
	d, ok3 := digits(s[8:10])
	if !ok1 || !ok2 || !ok3 || m < 1 || m > 12 || d < 1 || d > daysIn(m, y) {
		return 0, false
	}
	return daysFromCivil(y, m, d), true
}

// second reads "2006-01-02T15:04:05" in Unix seconds.
func second(s string) (int64, bool) {
	if len(s) != 19 || s[10] != 'T' || s[13] != ':' || s[16] != ':' {
		return 0, false
	}
	days, ok := date(s[:10])
	h, ok1 := digits(s[11:13])
	mi, ok2 := digits(s[14:16])
	sec, ok3 := digits(s[17:19])
	if !ok || !ok1 || !ok2 || !ok3 || h > 23 || mi > 59 || sec > 59 {
		return 0, false
	}
	return days*86400 + h*3600 + mi*60 + sec, true
}

// fracMillis reads what follows the seconds, "Z" or ".fraction" (1 to 9
// digits) then "Z", in milliseconds, truncated as UnixMilli truncates.
func fracMillis(s string) (int64, bool) {
	switch {
	case s == "Z":
		return 0, true
	case len(s) < 3 || len(s) > 11 || s[0] != '.' || s[len(s)-1] != 'Z':
		return 0, false
	}
	f, ok := digits(s[1 : len(s)-1])
	for n := len(s) - 2; n != 3; {
		if n > 3 {
			f, n = f/10, n-1
		} else {
			f, n = f*10, n+1
		}
	}
	return f, ok
}

// digits reads a run of 1 to 18 decimal digits.
func digits(s string) (int64, bool) {
	var n int64
	for i := 0; i < len(s); i++ {
		c := s[i] - '0'
		if c > 9 {
			return 0, false
		}
		n = n*10 + int64(c)
	}
	return n, len(s) > 0
}

func daysIn(m, y int64) int64 {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// daysFromCivil is the number of days from 1970-01-01 to a proleptic
// Gregorian date (Howard Hinnant's algorithm), for years 0 to 9999.
func daysFromCivil(y, m, d int64) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 {
		era = (y - 399) / 400
	}
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}
