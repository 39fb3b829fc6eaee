package deploy

import (
	"net"
	"net/url"
	"path"
	"slices"
	"strconv"
	"testing"

	"handoff/internal/restcatalog"
)

// The catalog service serves the worker's tables: the same database and
// deep storage (TestComposeStarters checks the shared variables are the
// worker's), on the port it publishes and its health check asks, with a
// token, and tells clients on the host where MinIO is.
func TestComposeCatalog(t *testing.T) {
	p := loadCompose(t)
	c := svc(t, p, "catalog")
	e := env(c)
	for _, k := range []string{"DATABASE_URL", "HANDOFF_DEEP_STORAGE"} {
		if e[k] == "" || e[k] != env(svc(t, p, "worker"))[k] {
			t.Errorf("catalog %s=%q: want the worker's", k, e[k])
		}
	}
	checkStorageLocation(t, p, "catalog HANDOFF_DEEP_STORAGE", e["HANDOFF_DEEP_STORAGE"])
	tokens, vended, err := restcatalog.SecretsFromEnv(func(k string) string { return e[k] })
	if err != nil || len(tokens) != 1 {
		t.Errorf("catalog: tokens %d, %v: want HANDOFF_CATALOG_TOKEN set, 16 characters or more", len(tokens), err)
	}
	minio := env(svc(t, p, "minio"))
	if len(vended) > 0 && (vended["s3.access-key-id"] != minio["MINIO_ROOT_USER"] || vended["s3.secret-access-key"] != minio["MINIO_ROOT_PASSWORD"]) {
		t.Errorf("catalog: vended credentials are not minio's")
	}

	cmd := c.Command
	flag := func(name string) string {
		i := slices.Index(cmd, name)
		if i < 0 || i+1 >= len(cmd) {
			t.Fatalf("catalog runs %q: no %s", cmd, name)
		}
		return cmd[i+1]
	}
	if len(cmd) < 2 || cmd[0] != "catalog" || cmd[1] != "serve" {
		t.Fatalf("catalog runs %q: want catalog serve", cmd)
	}
	host, port, err := net.SplitHostPort(flag("--listen"))
	if err != nil || (host != "" && host != "0.0.0.0") {
		t.Errorf("catalog --listen %q: want :PORT or 0.0.0.0:PORT", flag("--listen"))
	}
	if len(c.Ports) != 1 || c.Ports[0].Target != mustPort(t, port) {
		t.Errorf("catalog publishes %v, but listens on port %s", c.Ports, port)
	}
	test := c.HealthCheck.Test
	if len(test) != 3 || path.Base(test[1]) != "httpcheck" {
		t.Fatalf("catalog health check %q: want [CMD /usr/local/bin/httpcheck URL]", test)
	}
	if hu, err := url.Parse(test[2]); err != nil || hu.Port() != port || hu.Path != "/readyz" {
		t.Errorf("catalog health check asks %s, want /readyz on port %s", test[2], port)
	}
	// Clients run on the host: MinIO as the host reaches it.
	cu, err := url.Parse(flag("--client-s3-endpoint"))
	published := svc(t, p, "minio").Ports[0].Published
	if err != nil || cu.Hostname() != "localhost" || cu.Port() != published {
		t.Errorf("catalog --client-s3-endpoint %s: want MinIO's published port on localhost (%s)", flag("--client-s3-endpoint"), published)
	}
}

func mustPort(t *testing.T, s string) uint32 {
	t.Helper()
	n, err := strconv.ParseUint(s, 10, 16)
	if err != nil {
		t.Fatalf("port %q: %v", s, err)
	}
	return uint32(n)
}
