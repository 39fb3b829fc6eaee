package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/sr"
	"golang.org/x/sync/singleflight"
)

// Fetch bounds: one request, and all tries of one fetch. A fetch that fails
// them all is an UnavailableError; its caller retries later (the consume
// activity, with back-off).
const (
	requestTimeout = 5 * time.Second
	fetchTries     = 3
	firstBackoff   = 200 * time.Millisecond
	// notFoundFor: a 404 is remembered this long, so a topic full of
	// records naming an unknown id does not ask the registry for each.
	notFoundFor = 30 * time.Second
	// maxRefDepth bounds reference chains (and cycles).
	maxRefDepth = 32
)

// Schema is one registered schema with the schemas it references, in the
// order of its references.
type Schema struct {
	ID         int
	Type       sr.SchemaType
	Text       string
	References []Reference

	mu   sync.Mutex
	memo map[string]memoized
}

// Reference is one schema reference: the name the referencing schema uses
// (a Protobuf import path, an Avro type name) and the schema it names.
type Reference struct {
	Name    string
	Subject string
	Version int
	Schema  *Schema
}

type memoized struct {
	v   any
	err error
}

// Memo returns what build made of the schema the first time Memo was
// called with key: decoders keep their compiled form of a schema here, so
// that parsers sharing a client compile each schema once.
func (s *Schema) Memo(key string, build func() (any, error)) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m, ok := s.memo[key]; ok {
		return m.v, m.err
	}
	v, err := build()
	if s.memo == nil {
		s.memo = map[string]memoized{}
	}
	s.memo[key] = memoized{v, err}
	return v, err
}

// Client fetches schemas by id from one registry and caches them.
type Client struct {
	sr    *sr.Client
	group singleflight.Group

	mu       sync.Mutex
	byID     map[int]*Schema
	missing  map[int]time.Time // ids that were 404, until when
	failures int64
	now      func() time.Time
}

var (
	sharedMu sync.Mutex
	shared   = map[string]*Client{}
)

// Open returns the client of the registry cfg names, shared with every
// other caller naming it the same way; it resolves cfg's ${env:NAME}
// references and reads the TLS variables (EnvNames) the first time.
func Open(cfg Config) (*Client, error) {
	if where, msg := cfg.Check(); msg != "" {
		return nil, fmt.Errorf("schema registry %s: %s", where, msg)
	}
	key, _ := json.Marshal(cfg)
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if c, ok := shared[string(key)]; ok {
		return c, nil
	}
	c, err := newClient(cfg, osGetenv)
	if err != nil {
		return nil, err
	}
	shared[string(key)] = c
	return c, nil
}

// newClient builds a client of its own (tests; Open shares them).
func newClient(cfg Config, getenv func(string) string) (*Client, error) {
	opts := []sr.ClientOpt{sr.URLs(cfg.URLs...), sr.UserAgent("handoff")}
	t, err := tlsFromEnv(getenv)
	if err != nil {
		return nil, err
	}
	opts = append(opts, sr.HTTPClient(&http.Client{Timeout: requestTimeout, Transport: t}))
	if v := cfg.Config[KeyBasicInfo]; v != "" {
		info, err := resolve(v, getenv)
		if err != nil {
			return nil, err
		}
		user, pass, ok := strings.Cut(info, ":")
		if !ok {
			return nil, fmt.Errorf("schema registry basic.auth.user.info (%s): want user:password", EnvRef(v))
		}
		opts = append(opts, sr.BasicAuth(user, pass))
	}
	if v := cfg.Config[KeyBearerToken]; v != "" {
		tok, err := resolve(v, getenv)
		if err != nil {
			return nil, err
		}
		opts = append(opts, sr.BearerToken(tok))
	}
	if len(cfg.Headers) > 0 {
		headers := map[string]string{}
		for h, v := range cfg.Headers {
			if headers[h], err = resolve(v, getenv); err != nil {
				return nil, err
			}
		}
		opts = append(opts, sr.PreReq(func(r *http.Request) error {
			for h, v := range headers {
				r.Header.Set(h, v)
			}
			return nil
		}))
	}
	cl, err := sr.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("schema registry client: %w", err)
	}
	return &Client{sr: cl, byID: map[int]*Schema{}, missing: map[int]time.Time{}, now: time.Now}, nil
}

// Failures counts the fetches that ended in an UnavailableError.
func (c *Client) Failures() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.failures
}

// Schema returns the schema registered under id, from the cache or the
// registry. Errors are *NotFoundError or *UnavailableError.
func (c *Client) Schema(ctx context.Context, id int) (*Schema, error) {
	c.mu.Lock()
	s, ok := c.byID[id]
	until, missing := c.missing[id]
	c.mu.Unlock()
	switch {
	case ok:
		return s, nil
	case missing && c.now().Before(until):
		return nil, &NotFoundError{ID: id}
	}
	v, err, _ := c.group.Do(fmt.Sprint(id), func() (any, error) { return c.fetch(ctx, id) })
	c.mu.Lock()
	defer c.mu.Unlock()
	var nf *NotFoundError
	switch {
	case err == nil:
		s = v.(*Schema)
		c.byID[id] = s
		delete(c.missing, id)
		return s, nil
	case errors.As(err, &nf) && nf.Subject == "":
		c.missing[id] = c.now().Add(notFoundFor)
	case !errors.As(err, &nf):
		c.failures++
	}
	return nil, err
}

// fetch reads the schema and, depth first, the schemas it references.
func (c *Client) fetch(ctx context.Context, id int) (*Schema, error) {
	var raw sr.Schema
	err := c.try(ctx, id, func(ctx context.Context) (err error) {
		raw, err = c.sr.SchemaByID(ctx, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	s := &Schema{ID: id, Type: raw.Type, Text: raw.Schema}
	s.References, err = c.references(ctx, id, raw.References, 0)
	return s, err
}

func (c *Client) references(ctx context.Context, id int, refs []sr.SchemaReference, depth int) ([]Reference, error) {
	if len(refs) > 0 && depth >= maxRefDepth {
		return nil, &UnavailableError{ID: id, Err: fmt.Errorf("references nested more than %d deep (a cycle?)", maxRefDepth)}
	}
	var out []Reference
	for _, ref := range refs {
		var ss sr.SubjectSchema
		err := c.try(ctx, id, func(ctx context.Context) (err error) {
			ss, err = c.sr.SchemaByVersion(ctx, ref.Subject, ref.Version)
			return err
		})
		var nf *NotFoundError
		if errors.As(err, &nf) {
			return nil, &NotFoundError{ID: id, Subject: ref.Subject, Version: ref.Version}
		}
		if err != nil {
			return nil, err
		}
		sub := &Schema{ID: ss.ID, Type: ss.Type, Text: ss.Schema.Schema}
		if sub.References, err = c.references(ctx, id, ss.References, depth+1); err != nil {
			return nil, err
		}
		out = append(out, Reference{Name: ref.Name, Subject: ref.Subject, Version: ref.Version, Schema: sub})
	}
	return out, nil
}

// try runs one request up to fetchTries times, backing off between tries,
// and sorts its failure into NotFoundError and UnavailableError.
func (c *Client) try(ctx context.Context, id int, req func(context.Context) error) error {
	backoff := firstBackoff
	var last error
	for i := range fetchTries {
		if i > 0 {
			select {
			case <-ctx.Done():
				return &UnavailableError{ID: id, Err: ctx.Err()}
			case <-time.After(backoff):
			}
			backoff *= 3
		}
		rctx, cancel := context.WithTimeout(ctx, requestTimeout)
		err := req(rctx)
		cancel()
		if err == nil {
			return nil
		}
		var re *sr.ResponseError
		if errors.As(err, &re) {
			if notFound(re) {
				return &NotFoundError{ID: id}
			}
			last = &UnavailableError{ID: id, Status: re.StatusCode, Err: responseReason(re)}
			if re.StatusCode < 500 && re.StatusCode != http.StatusTooManyRequests && re.StatusCode != http.StatusRequestTimeout {
				return last // 401, 403, ...: asking again now will not help
			}
			continue
		}
		last = &UnavailableError{ID: id, Err: scrub(err)}
	}
	return last
}

// notFound: a 404 with one of the registry's own not-found codes. A 404
// without one comes from something that is not a schema registry (a wrong
// URL path): that is a setup problem, not a bad record.
func notFound(re *sr.ResponseError) bool {
	if re.StatusCode != http.StatusNotFound {
		return false
	}
	switch re.ErrorCode {
	case sr.ErrSchemaNotFound.Code, sr.ErrSubjectNotFound.Code, sr.ErrVersionNotFound.Code:
		return true
	}
	return false
}

func responseReason(re *sr.ResponseError) error {
	msg := re.Message
	switch re.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden:
		msg = "the registry refused the credentials (check basic.auth.user.info or bearer.auth.token): " + msg
	case http.StatusNotFound:
		msg = "404 without a schema-registry error code: is the URL the registry's? " + msg
	}
	return errors.New(msg)
}

// scrub keeps a transport error's text without any user-info of the URL
// it names (a URL never carries credentials here, by Check; this guards
// against a registry redirecting to one).
func scrub(err error) error {
	return errors.New(redactAll(err.Error()))
}

func redactAll(s string) string {
	for _, scheme := range []string{"http://", "https://"} {
		for i := 0; ; {
			j := strings.Index(s[i:], scheme)
			if j < 0 {
				break
			}
			start := i + j + len(scheme)
			end := start + strings.IndexAny(s[start:]+" ", " /\"'")
			if at := strings.LastIndexByte(s[start:end], '@'); at >= 0 {
				s = s[:start] + "xxxxx" + s[start+at:]
			}
			i = start
		}
	}
	return s
}
