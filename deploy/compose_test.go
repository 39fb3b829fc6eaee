package deploy

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"
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
	"catalog":            {deps: map[string]string{"worker": healthy}, ports: []string{"8181:8181"}},
	"example-supervisor": {oneShot: true, deps: map[string]string{"worker": healthy, "kafka-topics": completed}},
	"sample-events":      {oneShot: true, deps: map[string]string{"example-supervisor": completed}},
}

// starterServices run the starter CLI from the handoff image.
var starterServices = []string{"catalog", "example-supervisor", "sample-events"}

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
	names, want := slices.Sorted(maps.Keys(p.Services)), slices.Sorted(maps.Keys(intended))
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
		for _, dep := range slices.Sorted(maps.Keys(p.Services[n].DependsOn)) {
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
	for _, n := range slices.Sorted(maps.Keys(p.Services)) {
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
