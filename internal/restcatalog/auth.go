package restcatalog

import (
	"bufio"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"handoff/internal/domain"
)

// MinTokenLen is the shortest bearer token accepted: 16 characters.
const MinTokenLen = 16

// Token is a bearer token the server accepts. Only its name reaches a
// log or an error; String and LogValue hide the secret.
type Token struct {
	// Name says whose it is (a client, an engine): logged with each
	// request it makes.
	Name string
	// Secret is the token itself: 16 or more printable ASCII characters.
	Secret string
	// Expires is when it stops being accepted; zero: never.
	Expires time.Time
}

func (t Token) String() string {
	return fmt.Sprintf("token %q (expires %s)", t.Name, expiry(t.Expires))
}

// LogValue shows the name and expiry, never the secret.
func (t Token) LogValue() slog.Value {
	return slog.GroupValue(slog.String("name", t.Name), slog.String("expires", expiry(t.Expires)))
}

func expiry(at time.Time) string {
	if at.IsZero() {
		return "never"
	}
	return at.UTC().Format(time.RFC3339)
}

// ParseTokens reads a tokens file: one token a line, as
//
//	NAME TOKEN [EXPIRES]
//
// where NAME follows the rule of datasource names, TOKEN is 16 or more
// printable ASCII characters without spaces and EXPIRES an RFC 3339 time;
// blank lines and lines starting with # are skipped. Names and tokens
// must be unique. Errors name source and the line, never a token.
func ParseTokens(r io.Reader, source string) ([]Token, error) {
	var out []Token
	names, secrets := map[string]int{}, map[string]int{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		t, err := parseTokenLine(line)
		if err != nil {
			return nil, fmt.Errorf("%s line %d: %w", source, n, err)
		}
		if prev, dup := names[t.Name]; dup {
			return nil, fmt.Errorf("%s line %d: token name %q is on line %d too", source, n, t.Name, prev)
		}
		if prev, dup := secrets[t.Secret]; dup {
			return nil, fmt.Errorf("%s line %d: the same token as on line %d", source, n, prev)
		}
		names[t.Name], secrets[t.Secret] = n, n
		out = append(out, t)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	return out, nil
}

func parseTokenLine(line string) (Token, error) {
	f := strings.Fields(line)
	if len(f) < 2 || len(f) > 3 {
		return Token{}, fmt.Errorf("%d fields: want NAME TOKEN [EXPIRES]", len(f))
	}
	t := Token{Name: f[0], Secret: f[1]}
	if err := domain.ValidateName("token name", t.Name); err != nil {
		return Token{}, err
	}
	if err := checkSecret(t.Secret); err != nil {
		return Token{}, fmt.Errorf("token %q: %w", t.Name, err)
	}
	if len(f) == 3 {
		at, err := time.Parse(time.RFC3339, f[2])
		if err != nil {
			return Token{}, fmt.Errorf("token %q: expiry %q: want an RFC 3339 time such as 2027-01-31T00:00:00Z", t.Name, f[2])
		}
		t.Expires = at
	}
	return t, nil
}

// checkSecret refuses a token too short to be one, or with characters a
// header could not carry. It never quotes the token.
func checkSecret(s string) error {
	if len(s) < MinTokenLen {
		return fmt.Errorf("%d characters: want at least %d", len(s), MinTokenLen)
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] > '~' {
			return fmt.Errorf("character %d is not printable ASCII", i+1)
		}
	}
	return nil
}

// authenticator checks bearer tokens. It keeps their SHA-256 only, and
// compares every one in constant time, so neither a match's position nor
// a partial match shows in the time an answer takes.
type authenticator struct {
	tokens []hashedToken
	now    func() time.Time
}

type hashedToken struct {
	name    string
	sum     [sha256.Size]byte
	expires time.Time
}

func newAuthenticator(tokens []Token, now func() time.Time) (*authenticator, error) {
	a := &authenticator{now: now}
	for _, t := range tokens {
		if err := domain.ValidateName("token name", t.Name); err != nil {
			return nil, err
		}
		if err := checkSecret(t.Secret); err != nil {
			return nil, fmt.Errorf("token %q: %w", t.Name, err)
		}
		a.tokens = append(a.tokens, hashedToken{name: t.Name, sum: sha256.Sum256([]byte(t.Secret)), expires: t.Expires})
	}
	return a, nil
}

// check reads the Authorization header and returns the token's name, or
// the 401 to send: no token, a malformed one, an unknown one, an expired
// one. The spec answers all of them 401 (a client may get a new token
// and retry); 403 is for a known token that may not do what it asks.
func (a *authenticator) check(header string) (string, *apiError) {
	if header == "" {
		return "", notAuthorized("no bearer token: send Authorization: Bearer <token>")
	}
	scheme, secret, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", notAuthorized("the Authorization header is not a bearer token: send Authorization: Bearer <token>")
	}
	sum := sha256.Sum256([]byte(strings.TrimSpace(secret)))
	found := -1
	for i := range a.tokens {
		if subtle.ConstantTimeCompare(sum[:], a.tokens[i].sum[:]) == 1 {
			found = i
		}
	}
	if found < 0 {
		return "", notAuthorized("the bearer token is not valid here")
	}
	t := a.tokens[found]
	if !t.expires.IsZero() && !a.now().Before(t.expires) {
		return "", notAuthorized("the bearer token %q expired at %s", t.name, expiry(t.expires))
	}
	return t.name, nil
}
