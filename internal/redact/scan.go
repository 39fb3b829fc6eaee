package redact

import "strings"

// userinfos masks the password in the user-info of every "://" in s
// (with or without a scheme before it).
func userinfos(s string) string {
	var b strings.Builder
	rest := s
	for {
		i := strings.Index(rest, "://")
		if i < 0 {
			break
		}
		start := i + len("://")
		from, to, ok := password(rest[start:])
		if !ok {
			b.WriteString(rest[:start])
			rest = rest[start:]
			continue
		}
		b.WriteString(rest[:start+from])
		b.WriteString(Mask)
		rest = rest[start+to:]
	}
	if b.Len() == 0 {
		return s
	}
	b.WriteString(rest)
	return b.String()
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// password finds the password of the URL whose text after "://" is u: the
// bytes between the user's ':' and the '@' that ends the user-info.
//
// A well-formed URL's user-info ends at the last '@' of its authority (up to
// the first '/', '?' or '#'). Passwords are often pasted unescaped, though,
// so when the authority has no '@' but looks like user:word with word not a
// port, the user-info runs on to the last '@' before the first '/', '?' or
// '#' that follows an '@'. A numeric "port" is taken for one: a password
// made of digits followed by an unescaped '/' is not recognised.
func password(u string) (from, to int, ok bool) {
	end := strings.IndexFunc(u, isSpace)
	if end < 0 {
		end = len(u)
	}
	u = u[:end]
	authority := u
	if i := strings.IndexAny(u, "/?#\"'`<>"); i >= 0 {
		authority = u[:i]
	}
	if at := strings.LastIndexByte(authority, '@'); at >= 0 {
		colon := strings.IndexByte(authority[:at], ':')
		if colon < 0 {
			return 0, 0, false
		}
		return colon + 1, at, true
	}
	colon := strings.IndexByte(authority, ':')
	if colon < 0 || strings.ContainsAny(u[:colon], "/?#@") || isPort(authority[colon+1:]) {
		return 0, 0, false
	}
	first := strings.IndexByte(u[colon:], '@')
	if first < 0 {
		return 0, 0, false
	}
	first += colon
	stop := len(u)
	if i := strings.IndexAny(u[first:], "/?#"); i >= 0 {
		stop = first + i
	}
	return colon + 1, strings.LastIndexByte(u[:stop], '@'), true
}

func isPort(s string) bool {
	if s == "" {
		return true
	}
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func isSpace(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\r' }

// keyValues masks the value of every key=value whose key names a password
// or secret: libpq's password= and sslpassword=, URL query parameters, and
// environment-style PGPASSWORD= or SASL_PASSWORD=. A quoted value keeps its
// quotes. An unquoted value ends at white space, and in a URL query
// (the key follows '?' or '&') also at '&' or '#'.
func keyValues(s string) string {
	if !strings.Contains(s, "=") {
		return s
	}
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); i++ {
		if s[i] != '=' {
			continue
		}
		keyEnd := i
		for keyEnd > 0 && s[keyEnd-1] == ' ' {
			keyEnd-- // "password = secret"
		}
		keyStart := keyEnd
		for keyStart > 0 && isKeyByte(s[keyStart-1]) {
			keyStart--
		}
		if !secretKey(strings.ToLower(s[keyStart:keyEnd])) {
			continue
		}
		inQuery := keyStart > 0 && (s[keyStart-1] == '?' || s[keyStart-1] == '&')
		from, to := value(s, i+1, inQuery)
		if from == to {
			continue
		}
		b.WriteString(s[last:from])
		b.WriteString(Mask)
		last, i = to, to-1
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

func isKeyByte(c byte) bool {
	return isLetter(c) || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-'
}

// secretKeys are the key endings that name a secret.
var secretKeys = []string{"password", "passwd", "pwd", "secret", "token", "apikey", "api_key", "api-key"}

func secretKey(key string) bool {
	for _, k := range secretKeys {
		if strings.HasSuffix(key, k) {
			return true
		}
	}
	return false
}

// value returns the bounds of the value that starts at or after i (past
// spaces), inside its quotes when quoted.
func value(s string, i int, inQuery bool) (from, to int) {
	for i < len(s) && s[i] == ' ' {
		i++
	}
	if i < len(s) && (s[i] == '\'' || s[i] == '"') {
		q := s[i]
		j := i + 1
		for j < len(s) && s[j] != q {
			if s[j] == '\\' {
				j++
			}
			j++
		}
		return i + 1, min(j, len(s))
	}
	j := i
	for j < len(s) && !isSpace(rune(s[j])) && !(inQuery && (s[j] == '&' || s[j] == '#')) {
		j++
	}
	return i, j
}
