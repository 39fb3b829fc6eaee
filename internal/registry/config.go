package registry

import (
	"fmt"
	"os"

	"handoff/internal/domain"
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

// The client settings a spec may give: domain.RegistrySettings.
const (
	KeyBasicSource = domain.RegistryBasicSource
	KeyBasicInfo   = domain.RegistryBasicInfo
	KeyBearerSrc   = domain.RegistryBearerSrc
	KeyBearerToken = domain.RegistryBearerToken
)

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

// EnvRef returns NAME of a value "${env:NAME}", "" for any other.
func EnvRef(v string) string { return domain.EnvRef(v) }

// Check reports what is wrong with c, as a spec's validation does
// (domain.CheckRegistry): where (a key under the decoder) and what.
func (c Config) Check() (where, msg string) {
	return domain.CheckRegistry(c.URLs, c.Config, c.Headers)
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

var osGetenv = os.Getenv
