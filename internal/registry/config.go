package registry

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"

	"handoff/internal/secure"
)

// Config names a registry as a spec does (Druid's schema_registry
// decoder): its URLs, Confluent client settings and extra HTTP headers.
// Secret values are ${env:NAME} references, resolved from the worker's
// environment by Open.
type Config struct {
	URLs    []string
	Config  map[string]string
	Headers map[string]string
}

// The client settings a spec may give, by their Confluent names.
const (
	KeyBasicSource = "basic.auth.credentials.source" // USER_INFO
	KeyBasicInfo   = "basic.auth.user.info"          // ${env:NAME} holding user:password
	KeyBearerSrc   = "bearer.auth.credentials.source" // STATIC_TOKEN
	KeyBearerToken = "bearer.auth.token"              // ${env:NAME} holding the token
)

// Keys lists the settings Config.Config may hold.
var Keys = []string{KeyBasicSource, KeyBasicInfo, KeyBearerSrc, KeyBearerToken}

// secretKeys must be ${env:NAME}: a spec is stored and shown by status.
var secretKeys = []string{KeyBasicInfo, KeyBearerToken}

// The worker's variables for the registry's TLS, named as Kafka's are
// (KAFKA_TLS...): TLS is on for https URLs with the system's roots, and
// these add a CA, a client certificate or a server name.
var tlsEnv = secure.TLSEnv{
	Enabled: "SCHEMA_REGISTRY_TLS", CAFile: "SCHEMA_REGISTRY_TLS_CA_FILE",
	CertFile: "SCHEMA_REGISTRY_TLS_CERT_FILE", KeyFile: "SCHEMA_REGISTRY_TLS_KEY_FILE",
	ServerName: "SCHEMA_REGISTRY_TLS_SERVER_NAME", InsecureSkipVerify: "SCHEMA_REGISTRY_TLS_INSECURE_SKIP_VERIFY",
}

// EnvNames are the worker's variables Open reads besides those a spec's
// ${env:NAME} references name.
var EnvNames = tlsEnv.Names()

var envRef = regexp.MustCompile(`^\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}$`)

// EnvRef returns NAME of a value "${env:NAME}", or "" when the value is not
// such a reference.
func EnvRef(v string) string {
	if m := envRef.FindStringSubmatch(v); m != nil {
		return m[1]
	}
	return ""
}

// Check reports what is wrong with c, as a spec's validation shows it:
// where (a key under the decoder) and what. It reads no environment.
func (c Config) Check() (where, msg string) {
	if len(c.URLs) == 0 {
		return "url", "required: the schema registry's URL (or urls)"
	}
	for i, u := range c.URLs {
		switch {
		case !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://"):
			return fmt.Sprintf("urls[%d]", i), fmt.Sprintf("%q: want an http:// or https:// URL", redactURL(u))
		case strings.Contains(strings.SplitN(strings.SplitN(u, "://", 2)[1], "/", 2)[0], "@"):
			return fmt.Sprintf("urls[%d]", i), "credentials do not belong in the URL: set config basic.auth.user.info to ${env:NAME}"
		}
	}
	for k, v := range c.Config {
		switch {
		case !slices.Contains(Keys, k):
			return "config." + k, fmt.Sprintf("not a setting handoff reads: want one of %s", strings.Join(Keys, ", "))
		case slices.Contains(secretKeys, k) && EnvRef(v) == "":
			return "config." + k, "a secret: give it as ${env:NAME}, a variable of the worker's environment (specs are stored and shown by status)"
		case k == KeyBasicSource && v != "USER_INFO":
			return "config." + k, fmt.Sprintf("%q: only USER_INFO (basic.auth.user.info) is supported", v)
		case k == KeyBearerSrc && v != "STATIC_TOKEN":
			return "config." + k, fmt.Sprintf("%q: only STATIC_TOKEN (bearer.auth.token) is supported", v)
		}
	}
	if c.Config[KeyBasicInfo] != "" && c.Config[KeyBearerToken] != "" {
		return "config", "basic.auth.user.info and bearer.auth.token: set one or the other"
	}
	for h, v := range c.Headers {
		if strings.EqualFold(h, "Authorization") && EnvRef(v) == "" {
			return "headers." + h, "a secret: give it as ${env:NAME}, a variable of the worker's environment"
		}
	}
	return "", ""
}

// resolve returns the value of v, reading ${env:NAME} from getenv. A
// reference to an unset variable is an error naming the variable.
func resolve(v string, getenv func(string) string) (string, error) {
	name := EnvRef(v)
	if name == "" {
		return v, nil
	}
	val := getenv(name)
	if val == "" {
		return "", fmt.Errorf("the worker's environment variable %s (named by the spec's schema registry settings) is not set", name)
	}
	return val, nil
}

// redactURL drops a URL's user-info, for messages.
func redactURL(u string) string {
	scheme, rest, ok := strings.Cut(u, "://")
	if !ok {
		return u
	}
	host, path, _ := strings.Cut(rest, "/")
	if at := strings.LastIndexByte(host, '@'); at >= 0 {
		host = "xxxxx" + host[at:]
	}
	if path != "" {
		return scheme + "://" + host + "/" + path
	}
	return scheme + "://" + host
}

var osGetenv = os.Getenv
