package deploy

import (
	"fmt"
	"net"
	"net/url"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/compose-spec/compose-go/v2/types"
)

func TestComposeWorker(t *testing.T) {
	p := loadCompose(t)
	w := svc(t, p, "worker")
	e := env(w)

	// Only variables the worker reads, and the ones it needs set here.
	reads := workerEnv(t)
	for k := range e {
		if !reads[k] {
			t.Errorf("worker environment %s: the worker does not read it (it reads %q)", k, sortedKeys(reads))
		}
	}
	for _, k := range []string{"DATABASE_URL", "TEMPORAL_ADDRESS", "TEMPORAL_NAMESPACE", "KAFKA_BROKERS", "HANDOFF_DEEP_STORAGE", "HANDOFF_STAGING_DIR", "HANDOFF_HTTP_ADDR"} {
		if e[k] == "" {
			t.Errorf("worker environment: %s not set", k)
		}
	}

	// The metadata database is the postgres service's.
	pg := env(svc(t, p, "postgres"))
	u, err := url.Parse(e["DATABASE_URL"])
	if err != nil {
		t.Fatal(err)
	}
	pw, _ := u.User.Password()
	if u.Host != "postgres:5432" || u.User.Username() != pg["POSTGRES_USER"] || pw != pg["POSTGRES_PASSWORD"] || u.Path != "/"+pg["POSTGRES_DB"] {
		t.Errorf("DATABASE_URL %s does not match the postgres service %v", e["DATABASE_URL"], pg)
	}

	// Temporal: the server's frontend, and the namespace temporal-setup made.
	setup := env(svc(t, p, "temporal-setup"))
	if e["TEMPORAL_ADDRESS"] != "temporal:7233" || setup["TEMPORAL_ADDRESS"] != e["TEMPORAL_ADDRESS"] {
		t.Errorf("TEMPORAL_ADDRESS %q (temporal-setup: %q), want temporal:7233", e["TEMPORAL_ADDRESS"], setup["TEMPORAL_ADDRESS"])
	}
	if setup["TEMPORAL_NAMESPACE"] != e["TEMPORAL_NAMESPACE"] {
		t.Errorf("the worker uses namespace %q, temporal-setup makes %q", e["TEMPORAL_NAMESPACE"], setup["TEMPORAL_NAMESPACE"])
	}

	// Kafka: the listener Kafka advertises to containers.
	kafka := env(svc(t, p, "kafka"))
	if !slices.Contains(advertised(kafka), e["KAFKA_BROKERS"]) {
		t.Errorf("KAFKA_BROKERS %q is not one of Kafka's advertised listeners %q", e["KAFKA_BROKERS"], advertised(kafka))
	}

	// HTTP: on every interface of the container, on the published port,
	// and what the health check asks.
	host, port, err := net.SplitHostPort(e["HANDOFF_HTTP_ADDR"])
	if err != nil || (host != "" && host != "0.0.0.0") {
		t.Errorf("HANDOFF_HTTP_ADDR %q: want :PORT or 0.0.0.0:PORT, reachable from outside the container", e["HANDOFF_HTTP_ADDR"])
	}
	if len(w.Ports) != 1 || fmt.Sprint(w.Ports[0].Target) != port {
		t.Errorf("worker publishes %v, but listens on port %s", w.Ports, port)
	}
	test := w.HealthCheck.Test
	b := findGoBuild(t, parseDockerfile(t))
	if len(test) != 3 || test[0] != "CMD" || !slices.Contains(b.binaries(), path.Base(test[1])) || path.Dir(test[1]) != "/usr/local/bin" {
		t.Fatalf("worker health check %q: want [CMD /usr/local/bin/<a binary the image has> URL]", test)
	}
	if hu, err := url.Parse(test[2]); err != nil || hu.Port() != port || hu.Path != "/readyz" {
		t.Errorf("worker health check asks %s, want /readyz on port %s", test[2], port)
	}

	// Storage: a path on a volume the image owns, or an s3:// URI of the
	// bucket minio-bucket creates.
	for _, k := range []string{"HANDOFF_DEEP_STORAGE", "HANDOFF_STAGING_DIR"} {
		checkStorageLocation(t, p, k, e[k])
	}

	// Docker waits for the shutdown grace before it kills.
	grace := 30 * time.Second
	if g, ok := e["HANDOFF_SHUTDOWN_GRACE"]; ok {
		if grace, err = time.ParseDuration(g); err != nil {
			t.Fatal(err)
		}
	}
	if w.StopGracePeriod == nil || time.Duration(*w.StopGracePeriod) < grace+10*time.Second {
		t.Errorf("stop_grace_period %v: want at least the worker's shutdown grace %s plus 10s", w.StopGracePeriod, grace)
	}
}

// advertised are the host:port pairs of KAFKA_ADVERTISED_LISTENERS.
func advertised(kafka map[string]string) []string {
	var out []string
	for _, l := range strings.Split(kafka["KAFKA_ADVERTISED_LISTENERS"], ",") {
		if _, hp, ok := strings.Cut(l, "://"); ok {
			out = append(out, hp)
		}
	}
	return out
}

func checkStorageLocation(t *testing.T, p *types.Project, name, loc string) {
	t.Helper()
	w := svc(t, p, "worker")
	if rest, ok := strings.CutPrefix(loc, "s3://"); ok {
		bucket, _, _ := strings.Cut(rest, "/")
		mb := strings.Join(svc(t, p, "minio-bucket").Command, " ")
		if !strings.Contains(mb, "mc mb --ignore-existing local/"+bucket) {
			t.Errorf("%s=%s: minio-bucket does not create bucket %s (%s)", name, loc, bucket, mb)
		}
		e, minio := env(w), env(svc(t, p, "minio"))
		if e["HANDOFF_S3_ENDPOINT"] != "http://minio:9000" || e["AWS_ACCESS_KEY_ID"] != minio["MINIO_ROOT_USER"] || e["AWS_SECRET_ACCESS_KEY"] != minio["MINIO_ROOT_PASSWORD"] {
			t.Errorf("%s=%s: the worker's S3 endpoint and credentials are not minio's", name, loc)
		}
		return
	}
	if !path.IsAbs(loc) {
		t.Errorf("%s=%s: want an absolute path in the container", name, loc)
		return
	}
	for _, v := range w.Volumes {
		if v.Type == types.VolumeTypeVolume && strings.HasPrefix(loc, v.Target+"/") {
			// The image must own the mount point, or the volume is root's.
			if !dataOwnedByImageUser(t, v.Target) {
				t.Errorf("%s=%s: the image does not create %s for its user", name, loc, v.Target)
			}
			return
		}
	}
	t.Errorf("%s=%s is on no named volume of the worker: it would be lost with the container", name, loc)
}

func dataOwnedByImageUser(t *testing.T, dir string) bool {
	final := parseDockerfile(t).final()
	users := final.all("USER")
	if len(users) == 0 {
		return false
	}
	for _, in := range final.all("COPY") {
		if flags, _, dst := copyArgs(t, in); dst == dir && flags["chown"] == users[len(users)-1].args {
			return true
		}
	}
	return false
}
