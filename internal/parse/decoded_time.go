package parse

// decodedMillis reads a kindTime text in Unix milliseconds. The decoders
// (internal/decode) write instants as RFC 3339 in UTC,
// "2006-01-02T15:04:05[.fraction]Z", and dates as "2006-01-02": those are
// read digit by digit, as a record's time is once per record; anything
// else goes to parseISO, which reads it or says why not.
func decodedMillis(s string) (int64, error) {
	if ms, ok := utcMillis(s); ok {
		return ms, nil
	}
	return parseISO(s)
}

// utcMillis reads the decoders' forms of a time; ok is false for
// anything else, or an impossible date or clock.
func utcMillis(s string) (int64, bool) {
	if len(s) < 10 || s[4] != '-' || s[7] != '-' {
		return 0, false
	}
	y, ok1 := digits(s[0:4])
	m, ok2 := digits(s[5:7])
	d, ok3 := digits(s[8:10])
	if !ok1 || !ok2 || !ok3 || m < 1 || m > 12 || d < 1 || d > daysIn(m, y) {
		return 0, false
	}
	ms := daysFromCivil(y, m, d) * 86_400_000
	if len(s) == 10 {
		return ms, true
	}
	if len(s) < 20 || s[10] != 'T' || s[13] != ':' || s[16] != ':' || s[len(s)-1] != 'Z' {
		return 0, false
	}
	h, ok1 := digits(s[11:13])
	mi, ok2 := digits(s[14:16])
	sec, ok3 := digits(s[17:19])
	if !ok1 || !ok2 || !ok3 || h > 23 || mi > 59 || sec > 59 {
		return 0, false
	}
	ms += (h*3600 + mi*60 + sec) * 1000
	switch frac := s[19 : len(s)-1]; {
	case frac == "":
	case len(frac) < 2 || len(frac) > 10 || frac[0] != '.':
		return 0, false
	default:
		f, ok := digits(frac[1:])
		if !ok {
			return 0, false
		}
		for n := len(frac) - 1; n != 3; { // to milliseconds, truncated as UnixMilli truncates
			if n > 3 {
				f, n = f/10, n-1
			} else {
				f, n = f*10, n+1
			}
		}
		ms += f
	}
	return ms, true
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
