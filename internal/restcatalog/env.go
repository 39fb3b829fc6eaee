package restcatalog

import (
	"fmt"
	"strings"
)

// The secrets the catalog server reads from its environment only (a flag
// would show them to ps):
//
//	HANDOFF_CATALOG_TOKEN                     a bearer token, named "env" in logs
//	HANDOFF_CATALOG_VENDED_ACCESS_KEY_ID      S3 credentials handed to clients that
//	HANDOFF_CATALOG_VENDED_SECRET_ACCESS_KEY  ask for vended credentials; unset:
//	HANDOFF_CATALOG_VENDED_SESSION_TOKEN      none are ever handed out
const (
	EnvToken                 = "HANDOFF_CATALOG_TOKEN"
	EnvVendedAccessKeyID     = "HANDOFF_CATALOG_VENDED_ACCESS_KEY_ID"
	EnvVendedSecretAccessKey = "HANDOFF_CATALOG_VENDED_SECRET_ACCESS_KEY"
	EnvVendedSessionToken    = "HANDOFF_CATALOG_VENDED_SESSION_TOKEN"
)

// EnvNames are the variables SecretsFromEnv reads.
var EnvNames = []string{EnvToken, EnvVendedAccessKeyID, EnvVendedSecretAccessKey, EnvVendedSessionToken}

// EnvTokenName is the name the token of HANDOFF_CATALOG_TOKEN goes by.
const EnvTokenName = "env"

// SecretsFromEnv reads the token and the vended credentials through
// getenv. Errors name the variable, never its value.
func SecretsFromEnv(getenv func(string) string) (tokens []Token, vended map[string]string, err error) {
	if v := strings.TrimSpace(getenv(EnvToken)); v != "" {
		if err := checkSecret(v); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", EnvToken, err)
		}
		tokens = append(tokens, Token{Name: EnvTokenName, Secret: v})
	}
	id, secret, session := getenv(EnvVendedAccessKeyID), getenv(EnvVendedSecretAccessKey), getenv(EnvVendedSessionToken)
	switch {
	case id == "" && secret == "" && session == "":
		return tokens, nil, nil
	case id == "" || secret == "":
		return nil, nil, fmt.Errorf("%s and %s: set both to vend credentials, or neither", EnvVendedAccessKeyID, EnvVendedSecretAccessKey)
	}
	vended = map[string]string{"s3.access-key-id": id, "s3.secret-access-key": secret}
	if session != "" {
		vended["s3.session-token"] = session
	}
	return tokens, vended, nil
}
