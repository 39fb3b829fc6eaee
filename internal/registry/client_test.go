package registry

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/sr"
	"github.com/twmb/franz-go/pkg/sr/srfake"
)

const recordV1 = `{"type":"record","name":"E","fields":[{"name":"id","type":"string"}]}`

// counting counts the registry's requests.
func counting(reg *srfake.Registry) *atomic.Int64 {
	var n atomic.Int64
	reg.Intercept(func(http.ResponseWriter, *http.Request) bool { n.Add(1); return false })
	return &n
}

func TestSchemaIsFetchedOnceAndCached(t *testing.T) {
	reg := srfake.New()
	defer reg.Close()
	id, _, err := reg.RegisterSchema("e-value", sr.Schema{Schema: recordV1})
	require.NoError(t, err)
	n := counting(reg)
	c, err := newClient(Config{URLs: []string{reg.URL()}}, func(string) string { return "" })
	require.NoError(t, err)
	for range 3 {
		s, err := c.Schema(context.Background(), id)
		require.NoError(t, err)
		require.Equal(t, recordV1, s.Text)
		require.Equal(t, sr.TypeAvro, s.Type)
	}
	require.EqualValues(t, 1, n.Load(), "one request for three look-ups")
}

func TestUnknownIDIsNotFoundAndRemembered(t *testing.T) {
	reg := srfake.New()
	defer reg.Close()
	n := counting(reg)
	c, err := newClient(Config{URLs: []string{reg.URL()}}, func(string) string { return "" })
	require.NoError(t, err)
	for range 2 {
		_, err = c.Schema(context.Background(), 4242)
		var nf *NotFoundError
		require.ErrorAs(t, err, &nf)
		require.Equal(t, "schema id 4242 is not in the schema registry (404)", err.Error())
	}
	require.EqualValues(t, 1, n.Load(), "a 404 is remembered")
	require.Zero(t, c.Failures())
}

func TestOutageIsUnavailableNotNotFound(t *testing.T) {
	reg := srfake.New()
	defer reg.Close()
	id, _, err := reg.RegisterSchema("e-value", sr.Schema{Schema: recordV1})
	require.NoError(t, err)
	var down atomic.Bool
	var tries atomic.Int64
	down.Store(true)
	reg.Intercept(func(w http.ResponseWriter, _ *http.Request) bool {
		if !down.Load() {
			return false
		}
		tries.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
		return true
	})
	c, err := newClient(Config{URLs: []string{reg.URL()}}, func(string) string { return "" })
	require.NoError(t, err)
	_, err = c.Schema(context.Background(), id)
	var un *UnavailableError
	require.ErrorAs(t, err, &un)
	require.Equal(t, http.StatusServiceUnavailable, un.Status)
	require.EqualValues(t, fetchTries, tries.Load(), "5xx is tried again")
	require.EqualValues(t, 1, c.Failures())

	down.Store(false)
	s, err := c.Schema(context.Background(), id)
	require.NoError(t, err, "an outage is not remembered")
	require.Equal(t, id, s.ID)
}

func TestStoppedRegistryIsUnavailable(t *testing.T) {
	reg := srfake.New()
	url := reg.URL()
	reg.Close()
	c, err := newClient(Config{URLs: []string{url}}, func(string) string { return "" })
	require.NoError(t, err)
	_, err = c.Schema(context.Background(), 1)
	var un *UnavailableError
	require.ErrorAs(t, err, &un)
	require.Contains(t, err.Error(), "schema id 1")
}

func TestNotARegistry404IsUnavailable(t *testing.T) {
	reg := srfake.New()
	defer reg.Close()
	c, err := newClient(Config{URLs: []string{reg.URL() + "/not-here"}}, func(string) string { return "" })
	require.NoError(t, err)
	_, err = c.Schema(context.Background(), 1)
	var un *UnavailableError
	require.ErrorAs(t, err, &un, "a 404 without a registry error code is a wrong URL, not an unknown id")
	require.Contains(t, err.Error(), "is the URL the registry's?")
}

func TestBasicAuthFromTheEnvironment(t *testing.T) {
	const secret = "s3cr3t-pass"
	reg := srfake.New(srfake.WithAuth("Basic " + base64.StdEncoding.EncodeToString([]byte("fred:"+secret))))
	defer reg.Close()
	id, _, err := reg.RegisterSchema("e-value", sr.Schema{Schema: recordV1})
	require.NoError(t, err)
	cfg := Config{URLs: []string{reg.URL()}, Config: map[string]string{
		KeyBasicSource: "USER_INFO", KeyBasicInfo: "${env:REG_AUTH}",
	}}
	env := map[string]string{"REG_AUTH": "fred:" + secret}
	c, err := newClient(cfg, func(k string) string { return env[k] })
	require.NoError(t, err)
	_, err = c.Schema(context.Background(), id)
	require.NoError(t, err)

	env["REG_AUTH"] = "fred:wrong-pass"
	c, err = newClient(cfg, func(k string) string { return env[k] })
	require.NoError(t, err)
	_, err = c.Schema(context.Background(), id)
	var un *UnavailableError
	require.ErrorAs(t, err, &un, "refused credentials are a setup problem, not a bad record")
	require.Equal(t, http.StatusForbidden, un.Status, "srfake answers a wrong Authorization with 403")
	require.Contains(t, err.Error(), "refused the credentials")
	require.NotContains(t, err.Error(), "wrong-pass")

	delete(env, "REG_AUTH")
	_, err = newClient(cfg, func(k string) string { return env[k] })
	require.EqualError(t, err, "the worker's environment variable REG_AUTH (named by the spec's schema registry settings) is not set")
}

func TestBearerTokenFromTheEnvironment(t *testing.T) {
	reg := srfake.New(srfake.WithAuth("Bearer tok-123"))
	defer reg.Close()
	id, _, err := reg.RegisterSchema("e-value", sr.Schema{Schema: recordV1})
	require.NoError(t, err)
	c, err := newClient(Config{URLs: []string{reg.URL()}, Config: map[string]string{
		KeyBearerSrc: "STATIC_TOKEN", KeyBearerToken: "${env:TOK}",
	}}, func(k string) string { return map[string]string{"TOK": "tok-123"}[k] })
	require.NoError(t, err)
	_, err = c.Schema(context.Background(), id)
	require.NoError(t, err)
}

func TestReferencesAreFetched(t *testing.T) {
	reg := srfake.New()
	defer reg.Close()
	_, _, err := reg.RegisterSchema("inner", sr.Schema{Schema: `syntax = "proto3"; package p; message Inner { string s = 1; }`, Type: sr.TypeProtobuf})
	require.NoError(t, err)
	outer := sr.Schema{Type: sr.TypeProtobuf, Schema: `syntax = "proto3"; package p; import "inner.proto"; message Outer { Inner i = 1; }`,
		References: []sr.SchemaReference{{Name: "inner.proto", Subject: "inner", Version: 1}}}
	id, _, err := reg.RegisterSchema("outer", outer)
	require.NoError(t, err)
	c, err := newClient(Config{URLs: []string{reg.URL()}}, func(string) string { return "" })
	require.NoError(t, err)
	s, err := c.Schema(context.Background(), id)
	require.NoError(t, err)
	require.Len(t, s.References, 1)
	require.Equal(t, "inner.proto", s.References[0].Name)
	require.Contains(t, s.References[0].Schema.Text, "message Inner")
}

func TestCheckRefusesSecretsInTheSpec(t *testing.T) {
	for _, tc := range []struct {
		cfg         Config
		where, want string
	}{
		{Config{}, "url", "required"},
		{Config{URLs: []string{"registry:8081"}}, "urls[0]", "want an http:// or https:// URL"},
		{Config{URLs: []string{"https://fred:pw@reg"}}, "urls[0]", "credentials do not belong in the URL"},
		{Config{URLs: []string{"http://r"}, Config: map[string]string{KeyBasicInfo: "fred:letmein"}}, "config.basic.auth.user.info", "give it as ${env:NAME}"},
		{Config{URLs: []string{"http://r"}, Config: map[string]string{KeyBearerToken: "abc"}}, "config.bearer.auth.token", "give it as ${env:NAME}"},
		{Config{URLs: []string{"http://r"}, Config: map[string]string{"schema.registry.ssl.truststore.location": "/x"}}, "config.schema.registry.ssl.truststore.location", "not a setting handoff reads"},
		{Config{URLs: []string{"http://r"}, Headers: map[string]string{"authorization": "Bearer x"}}, "headers.authorization", "a secret"},
	} {
		where, msg := tc.cfg.Check()
		require.Equal(t, tc.where, where, "%+v", tc.cfg)
		require.Contains(t, msg, tc.want)
		require.NotContains(t, msg, "letmein")
		require.NotContains(t, msg, "pw@")
	}
	where, msg := Config{URLs: []string{"https://reg"}, Config: map[string]string{KeyBasicSource: "USER_INFO", KeyBasicInfo: "${env:X}"},
		Headers: map[string]string{"X-Trace": "1", "Authorization": "${env:AUTH}"}}.Check()
	require.Empty(t, where+msg)
}

func TestOpenSharesClients(t *testing.T) {
	a, err := Open(Config{URLs: []string{"http://127.0.0.1:1"}})
	require.NoError(t, err)
	b, err := Open(Config{URLs: []string{"http://127.0.0.1:1"}})
	require.NoError(t, err)
	require.Same(t, a, b)
	c, err := Open(Config{URLs: []string{"http://127.0.0.1:2"}})
	require.NoError(t, err)
	require.NotSame(t, a, c)
}

func TestRedactAll(t *testing.T) {
	got := redactAll(`Get "https://fred:pw@reg:8081/schemas/ids/1": dial tcp: refused`)
	require.False(t, strings.Contains(got, "pw"), got)
	require.Contains(t, got, "https://xxxxx@reg:8081/schemas")
	require.True(t, errors.Is(error(&UnavailableError{Err: context.Canceled}), context.Canceled))
}
