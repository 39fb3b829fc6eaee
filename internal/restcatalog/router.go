package restcatalog

import (
	"net/http"
	"net/url"
	"strings"

	"handoff/internal/domain"
)

// route is one path of the spec this server answers.
type route int

const (
	routeConfig           route = iota + 1 // /v1/config
	routeOAuthTokens                       // /v1/oauth/tokens
	routeNamespaces                        // /v1/{prefix}/namespaces
	routeNamespace                         // /v1/{prefix}/namespaces/{namespace}
	routeNamespaceProps                    // /v1/{prefix}/namespaces/{namespace}/properties
	routeRegister                          // /v1/{prefix}/namespaces/{namespace}/register
	routeTables                            // /v1/{prefix}/namespaces/{namespace}/tables
	routeTable                             // /v1/{prefix}/namespaces/{namespace}/tables/{table}
	routeTableCredentials                  // /v1/{prefix}/namespaces/{namespace}/tables/{table}/credentials
	routeRename                            // /v1/{prefix}/tables/rename
	routeTransactions                      // /v1/{prefix}/transactions/commit
)

// maxPathLen bounds the escaped path a request may have: a namespace and
// a table name of at most 128 bytes each, escaped, fit many times over.
const maxPathLen = 2048

// request is a parsed path: its route and the names in it, each checked
// against the rule of datasource names (domain.ValidateName), so nothing
// that could walk a path or quote its way out of anything gets further.
type request struct {
	route     route
	prefix    string
	namespace []string // its parts
	table     string
}

// parsePath parses an escaped URL path (r.URL.EscapedPath()). Each
// segment is unescaped on its own, so an escaped "/" stays inside its
// name (and is refused there). The error is one to send.
func parsePath(escaped string) (request, *apiError) {
	if len(escaped) > maxPathLen {
		return request{}, badRequest("path is %d bytes long, more than %d", len(escaped), maxPathLen)
	}
	raw, ok := strings.CutPrefix(escaped, "/v1/")
	if !ok {
		return request{}, notFound("NotFoundException", "no such route: the Iceberg REST catalog is under /v1/ (GET /v1/config)")
	}
	segs := strings.Split(raw, "/")
	for i, s := range segs {
		u, err := url.PathUnescape(s)
		if err != nil {
			return request{}, badRequest("path segment %d is not valid percent-encoding", i+2)
		}
		segs[i] = u
	}
	switch {
	case len(segs) == 1 && segs[0] == "config":
		return request{route: routeConfig}, nil
	case len(segs) == 2 && segs[0] == "oauth" && segs[1] == "tokens":
		return request{route: routeOAuthTokens}, nil
	case len(segs) < 2:
		return request{}, unknownRoute()
	}
	req := request{prefix: segs[0]}
	if req.prefix == "" {
		return request{}, badRequest("empty prefix: the routes are /v1/{prefix}/..., with the prefix GET /v1/config gives")
	}
	rest := segs[1:]
	switch {
	case len(rest) == 2 && rest[0] == "tables" && rest[1] == "rename":
		req.route = routeRename
		return req, nil
	case len(rest) == 2 && rest[0] == "transactions" && rest[1] == "commit":
		req.route = routeTransactions
		return req, nil
	case rest[0] != "namespaces":
		return request{}, unknownRoute()
	case len(rest) == 1:
		req.route = routeNamespaces
		return req, nil
	}
	ns, err := parseNamespace(rest[1])
	if err != nil {
		return request{}, err
	}
	req.namespace = ns
	switch {
	case len(rest) == 2:
		req.route = routeNamespace
	case len(rest) == 3 && rest[2] == "properties":
		req.route = routeNamespaceProps
	case len(rest) == 3 && rest[2] == "register":
		req.route = routeRegister
	case len(rest) == 3 && rest[2] == "tables":
		req.route = routeTables
	case (len(rest) == 4 || len(rest) == 5) && rest[2] == "tables":
		if err := checkName("table name", rest[3]); err != nil {
			return request{}, err
		}
		req.table = rest[3]
		req.route = routeTable
		if len(rest) == 5 {
			if rest[4] != "credentials" {
				return request{}, unknownRoute()
			}
			req.route = routeTableCredentials
		}
	default:
		return request{}, unknownRoute()
	}
	return req, nil
}

func unknownRoute() *apiError {
	return notFound("NotFoundException", "no such route in the Iceberg REST catalog API this server serves (GET /v1/config lists its endpoints)")
}

// namespaceSeparator separates the parts of a namespace in a path or a
// parent parameter: the spec's default, the unit separator, which this
// server does not change.
const namespaceSeparator = "\x1f"

// parseNamespace splits an unescaped namespace on the separator and
// checks each part.
func parseNamespace(s string) ([]string, *apiError) {
	parts := strings.Split(s, namespaceSeparator)
	for _, p := range parts {
		if strings.Contains(p, ".") {
			return nil, badRequest("namespace part %s contains '.': separate the parts of a namespace with %%1F", quote(p))
		}
		if err := checkName("namespace", p); err != nil {
			return nil, err
		}
	}
	return parts, nil
}

// checkName refuses a name no handoff table or namespace could have.
func checkName(field, s string) *apiError {
	if err := domain.ValidateName(field, s); err != nil {
		return badRequest("%v", err)
	}
	return nil
}

// quote quotes what a client sent for a message, cut short.
func quote(s string) string { return domain.QuoteName(s) }

// op is what a method does on a route: a read this server answers, or a
// write it refuses (named as the spec's operationId).
type op struct {
	read  func(s *Server, w http.ResponseWriter, r *http.Request, req request) *apiError
	write string
}

// methods is every route's methods, as the spec defines them.
var methods = map[route]map[string]op{
	routeConfig:      {http.MethodGet: {read: (*Server).getConfig}},
	routeOAuthTokens: {http.MethodPost: {read: (*Server).oauthTokens}},
	routeNamespaces: {
		http.MethodGet:  {read: (*Server).listNamespaces},
		http.MethodPost: {write: "createNamespace"},
	},
	routeNamespace: {
		http.MethodGet:    {read: (*Server).loadNamespace},
		http.MethodHead:   {read: (*Server).namespaceExists},
		http.MethodDelete: {write: "dropNamespace"},
	},
	routeNamespaceProps: {http.MethodPost: {write: "updateProperties"}},
	routeRegister:       {http.MethodPost: {write: "registerTable"}},
	routeTables: {
		http.MethodGet:  {read: (*Server).listTables},
		http.MethodPost: {write: "createTable"},
	},
	routeTable: {
		http.MethodGet:    {read: (*Server).loadTable},
		http.MethodHead:   {read: (*Server).tableExists},
		http.MethodPost:   {write: "updateTable"},
		http.MethodDelete: {write: "dropTable"},
	},
	routeTableCredentials: {http.MethodGet: {read: (*Server).loadCredentials}},
	routeRename:           {http.MethodPost: {write: "renameTable"}},
	routeTransactions:     {http.MethodPost: {write: "commitTransaction"}},
}

// allowed lists a route's methods for an Allow header.
func allowed(rt route) string {
	var ms []string
	for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodDelete} {
		if _, ok := methods[rt][m]; ok {
			ms = append(ms, m)
		}
	}
	return strings.Join(ms, ", ")
}
