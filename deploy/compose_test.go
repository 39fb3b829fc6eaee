package deploy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"

	"handoff/internal/searchattr"
	startercli "handoff/starter/cli"
)

const (
	healthy   = types.ServiceConditionHealthy
	completed = types.ServiceConditionCompletedSuccessfully
)

// service is what the stack is meant to be, one entry per service: a
// long-running service (with a health check) or a one-shot that must exit
// 0, what it waits for, and the host ports it publishes.
type service struct {
	oneShot bool
	deps    map[string]string
	ports   []string // "published:target"
}

var intended = map[string]service{
	"postgres":           {ports: []string{"5432:5432"}},
	"temporal-postgres":  {},
	"temporal-schema":    {oneShot: true, deps: map[string]string{"temporal-postgres": healthy}},
	"temporal":           {deps: map[string]string{"temporal-schema": completed}, ports: []string{"7233:7233"}},
	"temporal-setup":     {oneShot: true, deps: map[string]string{"temporal": healthy}},
	"temporal-ui":        {deps: map[string]string{"temporal-setup": completed}, ports: []string{"8233:8080"}},
	"kafka":              {ports: []string{"9092:9092"}},
	"kafka-topics":       {oneShot: true, deps: map[string]string{"kafka": healthy}},
	"minio":              {ports: []string{"9000:9000", "9001:9001"}},
	"minio-bucket":       {oneShot: true, deps: map[string]string{"minio": healthy}},
	"worker":             {deps: map[string]string{"postgres": healthy, "temporal-setup": completed, "kafka": healthy, "minio-bucket": completed}, ports: []string{"8081:8081"}},
	"example-supervisor": {oneShot: true, deps: map[string]string{"worker": healthy, "kafka-topics": completed}},
	"sample-events":      {oneShot: true, deps: map[string]string{"example-supervisor": completed}},
}

// starterServices run the starter CLI from the handoff image.
var starterServices = []string{"example-supervisor", "sample-events"}

func loadCompose(t *testing.T) *types.Project {
	t.Helper()
	root := repoRoot(t)
	// No OS environment: the file must not depend on the caller's.
	opts, err := cli.NewProjectOptions([]string{filepath.Join(root, "docker-compose.yml")},
		cli.WithWorkingDirectory(root), cli.WithResolvedPaths(true))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, err := opts.LoadProject(ctx)
	if err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	return p
}

func svc(t *testing.T, p *types.Project, name string) types.ServiceConfig {
	t.Helper()
	s, ok := p.Services[name]
	if !ok {
		t.Fatalf("no service %s", name)
	}
	return s
}

func env(s types.ServiceConfig) map[string]string {
	m := map[string]string{}
	for k, v := range s.Environment {
		if v != nil {
			m[k] = *v
		}
	}
	return m
}

func TestComposeServicesAndOrder(t *testing.T) {
	p := loadCompose(t)
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range p.Services {
			if !yield(n) {
				return
			}
		}
	})
	want := slices.Sorted(func(yield func(string) bool) {
		for n := range intended {
			if !yield(n) {
				return
			}
		}
	})
	if !slices.Equal(names, want) {
		t.Fatalf("services %q, want %q", names, want)
	}
	for name, w := range intended {
		s := p.Services[name]
		if len(s.Profiles) > 0 {
			t.Errorf("%s: in profiles %q: plain `docker compose up` would not start it", name, s.Profiles)
		}
		got := map[string]string{}
		for dep, d := range s.DependsOn {
			got[dep] = d.Condition
			if !d.Required {
				t.Errorf("%s: depends on %s, but not required", name, dep)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(w.deps) && (len(got) != 0 || len(w.deps) != 0) {
			t.Errorf("%s: depends_on %v, want %v", name, got, w.deps)
		}
		// What a dependency waits for follows from what it is.
		for dep, cond := range w.deps {
			if want := map[bool]string{true: completed, false: healthy}[intended[dep].oneShot]; cond != want {
				t.Errorf("intended: %s waits for %s to be %s; a %s one is %s", name, dep, cond, map[bool]string{true: "one-shot", false: "long-running"}[intended[dep].oneShot], want)
			}
		}
		hc := s.HealthCheck
		hasCheck := hc != nil && !hc.Disable && len(hc.Test) > 0 && hc.Test[0] != "NONE"
		switch {
		case w.oneShot && s.Restart != "no" && !strings.HasPrefix(s.Restart, "on-failure"):
			t.Errorf("%s: a one-shot with restart %q would be started again after it exits", name, s.Restart)
		case !w.oneShot && !hasCheck:
			t.Errorf("%s: a long-running service without a health check", name)
		case !w.oneShot && s.Restart != "unless-stopped" && s.Restart != "always":
			t.Errorf("%s: restart %q: a long-running service should come back", name, s.Restart)
		}
		var ports []string
		for _, pc := range s.Ports {
			ports = append(ports, pc.Published+":"+fmt.Sprint(pc.Target))
		}
		if !slices.Equal(ports, w.ports) {
			t.Errorf("%s: ports %q, want %q", name, ports, w.ports)
		}
	}

	// docker compose up can order them: no cycle. The example supervisor
	// starts only once everything it uses is there.
	if _, err := startOrder(p); err != nil {
		t.Fatal(err)
	}
	before := waitsFor(p, "example-supervisor")
	for _, need := range []string{"worker", "temporal-schema", "temporal-setup", "postgres", "kafka-topics", "minio-bucket"} {
		if !before[need] {
			t.Errorf("example-supervisor does not wait for %s (it waits for %q)", need, sortedKeys(before))
		}
	}
}

// waitsFor is every service that name waits for, directly or not.
func waitsFor(p *types.Project, name string) map[string]bool {
	seen := map[string]bool{}
	var walk func(string)
	walk = func(n string) {
		for dep := range p.Services[n].DependsOn {
			if !seen[dep] {
				seen[dep] = true
				walk(dep)
			}
		}
	}
	walk(name)
	return seen
}

// startOrder sorts the services so each comes after what it depends on.
func startOrder(p *types.Project) ([]string, error) {
	var order []string
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(string) error
	visit = func(n string) error {
		switch state[n] {
		case 1:
			return fmt.Errorf("dependency cycle through %s", n)
		case 2:
			return nil
		}
		state[n] = 1
		for _, dep := range slices.Sorted(func(yield func(string) bool) {
			for d := range p.Services[n].DependsOn {
				if !yield(d) {
					return
				}
			}
		}) {
			if _, ok := p.Services[dep]; !ok {
				return fmt.Errorf("%s depends on unknown %s", n, dep)
			}
			if err := visit(dep); err != nil {
				return err
			}
		}
		state[n] = 2
		order = append(order, n)
		return nil
	}
	for _, n := range slices.Sorted(func(yield func(string) bool) {
		for n := range p.Services {
			if !yield(n) {
				return
			}
		}
	}) {
		if err := visit(n); err != nil {
			return nil, err
		}
	}
	return order, nil
}

func TestComposeImages(t *testing.T) {
	p := loadCompose(t)
	root := repoRoot(t)
	for name, s := range p.Services {
		if s.Build != nil {
			if s.Build.Context != root || s.Build.Dockerfile != "Dockerfile" {
				t.Errorf("%s: builds %s from %s, want the repository's Dockerfile", name, s.Build.Dockerfile, s.Build.Context)
			}
			if s.Image != "handoff:local" {
				t.Errorf("%s: built image named %q, want handoff:local", name, s.Image)
			}
			continue
		}
		if !imagePinned(s.Image) {
			t.Errorf("%s: image %q is not pinned to a version", name, s.Image)
		}
	}
	for _, name := range append([]string{"worker"}, starterServices...) {
		if svc(t, p, name).Build == nil {
			t.Errorf("%s: not built from this repository", name)
		}
	}
	// Temporal's schema tool and server are one version, as the schema
	// must be; the UI and Kafka are the versions this was written for.
	tag := func(name string) string {
		img := svc(t, p, name).Image
		return img[strings.LastIndexByte(img, ':')+1:]
	}
	server := tag("temporal")
	if !strings.HasPrefix(server, "1.29.") {
		t.Errorf("Temporal server %s, want 1.29.x", server)
	}
	for _, name := range []string{"temporal-schema", "temporal-setup"} {
		if got := tag(name); got != server && !strings.HasPrefix(got, server+"-") {
			t.Errorf("%s: admin-tools %s for server %s", name, got, server)
		}
	}
	if ui := tag("temporal-ui"); !strings.HasPrefix(ui, "2.42.") {
		t.Errorf("Temporal UI %s, want 2.42.x", ui)
	}
	if kafka := svc(t, p, "kafka"); !strings.HasPrefix(kafka.Image, "apache/kafka:") || !strings.Contains(env(kafka)["KAFKA_PROCESS_ROLES"], "controller") {
		t.Errorf("kafka %s with roles %q: want apache/kafka in KRaft mode", kafka.Image, env(kafka)["KAFKA_PROCESS_ROLES"])
	}
}

func TestComposeVolumes(t *testing.T) {
	p := loadCompose(t)
	for name, s := range p.Services {
		for _, v := range s.Volumes {
			switch v.Type {
			case types.VolumeTypeVolume:
				if _, ok := p.Volumes[v.Source]; !ok {
					t.Errorf("%s: volume %s is not declared", name, v.Source)
				}
			case types.VolumeTypeBind:
				if _, err := os.Stat(v.Source); err != nil {
					t.Errorf("%s: bind mount: %v", name, err)
				}
				if !v.ReadOnly {
					t.Errorf("%s: bind mount %s is writable", name, v.Source)
				}
			default:
				t.Errorf("%s: volume type %s", name, v.Type)
			}
		}
		// A file an entrypoint runs from a bind mount is in the repository.
		for _, arg := range append(slices.Clone(s.Entrypoint), s.Command...) {
			for _, v := range s.Volumes {
				if rel, ok := strings.CutPrefix(arg, v.Target+"/"); ok && v.Type == types.VolumeTypeBind {
					if _, err := os.Stat(filepath.Join(v.Source, rel)); err != nil {
						t.Errorf("%s runs %s: %v", name, arg, err)
					}
				}
			}
		}
	}
}

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

func TestComposeStarters(t *testing.T) {
	p := loadCompose(t)
	root := repoRoot(t)
	reads := starterEnv(t)
	worker := env(svc(t, p, "worker"))
	kafkaTopic := topicCreated(t, p)
	b := findGoBuild(t, parseDockerfile(t))
	for _, name := range starterServices {
		s := svc(t, p, name)
		if len(s.Entrypoint) != 1 || s.Entrypoint[0] != "/usr/local/bin/starter" || !slices.Contains(b.binaries(), "starter") {
			t.Errorf("%s: entrypoint %q, want the image's /usr/local/bin/starter", name, s.Entrypoint)
		}
		for k, v := range env(s) {
			if !reads[k] {
				t.Errorf("%s: environment %s: the starter does not read it (it reads %q)", name, k, sortedKeys(reads))
			}
			if wv, ok := worker[k]; ok && wv != v {
				t.Errorf("%s: %s=%s, the worker has %s", name, k, v, wv)
			}
		}
		// The real CLI accepts the command line: flags are parsed before
		// --help is honoured, and help does nothing else.
		var stdout, stderr bytes.Buffer
		code := startercli.Run(context.Background(), append(slices.Clone(s.Command), "--help"),
			startercli.IO{Stdout: &stdout, Stderr: &stderr, Getenv: func(string) string { return "" }})
		if code != startercli.ExitOK || !strings.Contains(stdout.String(), "Usage:") {
			t.Errorf("%s: starter %q: exit %d\n%s", name, s.Command, code, stderr.String())
		}
		if i := slices.Index(s.Command, "--topic"); i >= 0 && s.Command[i+1] != kafkaTopic {
			t.Errorf("%s: produces to %s, kafka-topics creates %s", name, s.Command[i+1], kafkaTopic)
		}
	}

	// The example's spec: in the image (the Dockerfile copies examples/ to
	// /examples), valid, and reading the topic kafka-topics creates.
	cmd := svc(t, p, "example-supervisor").Command
	i := slices.Index(cmd, "-f")
	if len(cmd) < 2 || cmd[0] != "start" || i < 0 || i+1 >= len(cmd) || !slices.Contains(cmd, "--wait") {
		t.Fatalf("example-supervisor runs %q: want start -f SPEC --wait", cmd)
	}
	rel, ok := strings.CutPrefix(cmd[i+1], "/examples/")
	if !ok {
		t.Fatalf("spec %s is not under /examples", cmd[i+1])
	}
	spec := filepath.Join(root, "examples", rel)
	var stdout, stderr bytes.Buffer
	if code := startercli.Run(context.Background(), []string{"validate", "-f", spec}, startercli.IO{Stdout: &stdout, Stderr: &stderr}); code != startercli.ExitOK {
		t.Fatalf("starter validate -f %s: exit %d\n%s%s", spec, code, stdout.String(), stderr.String())
	}
	raw, err := os.ReadFile(spec)
	if err != nil {
		t.Fatal(err)
	}
	var parsed struct {
		IOConfig struct {
			Topic string `json:"topic"`
		} `json:"ioConfig"`
	}
	if err := json.Unmarshal(raw, &parsed); err != nil || parsed.IOConfig.Topic != kafkaTopic {
		t.Errorf("%s reads topic %q (%v), kafka-topics creates %q", spec, parsed.IOConfig.Topic, err, kafkaTopic)
	}
}

// topicCreated is the topic the kafka-topics one-shot creates.
func topicCreated(t *testing.T, p *types.Project) string {
	t.Helper()
	cmd := svc(t, p, "kafka-topics").Command
	i := slices.Index(cmd, "--topic")
	if i < 0 || i+1 >= len(cmd) || !slices.Contains(cmd, "--create") {
		t.Fatalf("kafka-topics runs %q: want --create --topic T", cmd)
	}
	if !slices.Contains(cmd, "--bootstrap-server") || !slices.Contains(advertised(env(svc(t, p, "kafka"))), cmd[slices.Index(cmd, "--bootstrap-server")+1]) {
		t.Errorf("kafka-topics runs %q: not against an advertised listener", cmd)
	}
	return cmd[i+1]
}

func TestComposeTemporalSetup(t *testing.T) {
	p := loadCompose(t)
	got := strings.Fields(env(svc(t, p, "temporal-setup"))["SEARCH_ATTRIBUTES"])
	if !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(searchattr.Names))) {
		t.Errorf("temporal-setup registers %q, the supervisors set %q", got, searchattr.Names)
	}
	// The server and the schema tool use one database.
	server, schema := env(svc(t, p, "temporal")), env(svc(t, p, "temporal-schema"))
	db := env(svc(t, p, "temporal-postgres"))
	if server["POSTGRES_SEEDS"] != "temporal-postgres" || schema["POSTGRES_SEEDS"] != server["POSTGRES_SEEDS"] ||
		server["POSTGRES_USER"] != db["POSTGRES_USER"] || schema["POSTGRES_USER"] != db["POSTGRES_USER"] ||
		server["POSTGRES_PWD"] != db["POSTGRES_PASSWORD"] || schema["SQL_PASSWORD"] != db["POSTGRES_PASSWORD"] {
		t.Errorf("temporal %v and temporal-schema %v do not both use temporal-postgres %v", server, schema, db)
	}
}

func TestComposeKafka(t *testing.T) {
	p := loadCompose(t)
	k := svc(t, p, "kafka")
	e := env(k)
	for _, role := range []string{"broker", "controller"} {
		if !slices.Contains(strings.Split(e["KAFKA_PROCESS_ROLES"], ","), role) {
			t.Errorf("KAFKA_PROCESS_ROLES %q: a single KRaft node is %s too", e["KAFKA_PROCESS_ROLES"], role)
		}
	}
	if e["CLUSTER_ID"] == "" || e["KAFKA_CONTROLLER_QUORUM_VOTERS"] != e["KAFKA_NODE_ID"]+"@kafka:9093" {
		t.Errorf("KRaft: cluster id %q, voters %q for node %q", e["CLUSTER_ID"], e["KAFKA_CONTROLLER_QUORUM_VOTERS"], e["KAFKA_NODE_ID"])
	}
	if !strings.HasPrefix(e["KAFKA_LOG_DIRS"], "/var/lib/kafka/data") || len(k.Volumes) != 1 || k.Volumes[0].Target != "/var/lib/kafka/data" {
		t.Errorf("Kafka's log dirs %q are not on its volume %v", e["KAFKA_LOG_DIRS"], k.Volumes)
	}
	// The external listener is the published port on localhost, for
	// clients on the host such as starter produce.
	if !slices.Contains(advertised(env(k)), "localhost:"+k.Ports[0].Published) {
		t.Errorf("kafka publishes %s but advertises %q", k.Ports[0].Published, advertised(env(k)))
	}
}
