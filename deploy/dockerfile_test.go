package deploy

import (
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// goBuild is the Dockerfile's go build command, read from its RUN line.
type goBuild struct {
	in       instruction
	mounts   []string          // the RUN's --mount flags
	env      map[string]string // the stage's ENV, then the command's assignments
	args     []string          // after "go build"
	out      string            // the -o directory
	packages []string          // ./worker, ...
}

// binaries are the names go build gives the packages' executables.
func (b goBuild) binaries() []string {
	var names []string
	for _, p := range b.packages {
		names = append(names, path.Base(p))
	}
	return names
}

func findGoBuild(t *testing.T, df dockerfile) goBuild {
	t.Helper()
	build := df.stage(t, "build")
	var found []goBuild
	for _, in := range build.all("RUN") {
		if !strings.Contains(in.args, "go build") {
			continue
		}
		b := goBuild{in: in, env: build.env(t)}
		words := shellWords(t, in.args)
		for len(words) > 0 && strings.HasPrefix(words[0], "--") {
			if m, ok := strings.CutPrefix(words[0], "--mount="); ok {
				b.mounts = append(b.mounts, m)
			}
			words = words[1:]
		}
		for len(words) > 0 && strings.Contains(words[0], "=") {
			k, v, _ := strings.Cut(words[0], "=")
			b.env[k] = v
			words = words[1:]
		}
		if len(words) < 2 || words[0] != "go" || words[1] != "build" {
			t.Fatalf("Dockerfile:%d: want one go build command in the RUN, got %q", in.line, words)
		}
		b.args = words[2:]
		for i := 0; i < len(b.args); i++ {
			a := b.args[i]
			switch {
			case a == "-o" && i+1 < len(b.args):
				b.out = b.args[i+1]
				i++
			case strings.HasPrefix(a, "-o="):
				b.out = strings.TrimPrefix(a, "-o=")
			case strings.HasPrefix(a, "./"):
				b.packages = append(b.packages, a)
			}
		}
		found = append(found, b)
	}
	if len(found) != 1 {
		t.Fatalf("the build stage has %d RUN lines with go build, want 1", len(found))
	}
	return found[0]
}

// pinnedImage: an exact version tag or a digest. distroless publishes no
// version tags, only moving ones such as nonroot: that one is named here.
var (
	versionTag    = regexp.MustCompile(`^v?\d+\.\d+(\.\d+)?([.-][0-9A-Za-z.-]+)?$|^RELEASE\.\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}Z$`)
	allowedMoving = map[string]bool{"gcr.io/distroless/static-debian12:nonroot": true}
)

func imagePinned(image string) bool {
	if strings.Contains(image, "@sha256:") || allowedMoving[image] {
		return true
	}
	i := strings.LastIndexByte(image, ':')
	if i < 0 || strings.Contains(image[i:], "/") {
		return false // no tag: latest
	}
	return versionTag.MatchString(image[i+1:])
}

func TestImagePinned(t *testing.T) {
	for _, ok := range []string{"postgres:15.14", "golang:1.26.8-bookworm", "temporalio/admin-tools:1.29.1-tctl-1.18.4-cli-1.5.0",
		"minio/minio:RELEASE.2025-09-07T16-13-09Z", "localhost:5000/x:2.1", "alpine@sha256:abc"} {
		if !imagePinned(ok) {
			t.Errorf("%s: not pinned?", ok)
		}
	}
	for _, bad := range []string{"postgres", "postgres:latest", "postgres:15", "minio/minio:RELEASE", "localhost:5000/x", "golang:bookworm", "x:stable"} {
		if imagePinned(bad) {
			t.Errorf("%s counts as pinned", bad)
		}
	}
}

func TestDockerfileStages(t *testing.T) {
	df := parseDockerfile(t)
	if len(df.stages) != 2 {
		t.Fatalf("%d stages, want a build stage and the runtime image", len(df.stages))
	}
	build, final := df.stage(t, "build"), df.final()
	if !regexp.MustCompile(`^golang:\d+\.\d+\.\d+-bookworm$`).MatchString(build.image) {
		t.Errorf("build stage FROM %s: want golang:X.Y.Z-bookworm", build.image)
	}
	for _, s := range df.stages {
		if !imagePinned(s.image) {
			t.Errorf("FROM %s is not pinned to a version", s.image)
		}
	}
	if final.image != "gcr.io/distroless/static-debian12:nonroot" {
		t.Errorf("runtime FROM %s: want the static distroless image", final.image)
	}

	// The Go of the image builds this module: the same minor version as
	// go.mod's go line, and not older.
	gomod, err := os.ReadFile(filepath.Join(repoRoot(t), "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	want := regexp.MustCompile(`(?m)^go (\d+)\.(\d+)(?:\.(\d+))?$`).FindStringSubmatch(string(gomod))
	got := regexp.MustCompile(`^golang:(\d+)\.(\d+)\.(\d+)`).FindStringSubmatch(build.image)
	if want == nil || got == nil || got[1] != want[1] || got[2] != want[2] || atoi(got[3]) < atoi(want[3]) {
		t.Errorf("build image %s for go.mod's go %v", build.image, want)
	}

	// Runs as a non-root user, with a numeric uid Kubernetes can verify.
	users := final.all("USER")
	if len(users) == 0 {
		t.Fatal("the runtime stage sets no USER: it would run as root")
	}
	user := users[len(users)-1].args
	uid, _, _ := strings.Cut(user, ":")
	if n, err := strconv.Atoi(uid); err != nil || n == 0 {
		t.Errorf("USER %s: want a numeric non-root uid", user)
	}

	// The entrypoint is the worker, one of the binaries built.
	b := findGoBuild(t, df)
	eps := final.all("ENTRYPOINT")
	if len(eps) != 1 {
		t.Fatalf("%d ENTRYPOINTs", len(eps))
	}
	if ep := execForm(t, eps[0]); len(ep) != 1 || ep[0] != "/usr/local/bin/worker" {
		t.Errorf("ENTRYPOINT %q: want the worker binary", ep)
	}
	copied := map[string]string{} // runtime destination -> source
	var examples, data bool
	for _, in := range final.all("COPY") {
		flags, srcs, dst := copyArgs(t, in)
		for _, src := range srcs {
			copied[dst] = src
			switch {
			case flags["from"] == "build" && src == b.out && dst == "/usr/local/bin/":
			case flags["from"] == "build" && dst == "/data" && flags["chown"] == user:
				data = true
			case flags["from"] == "" && src == "examples" && dst == "/examples":
				examples = true
			}
		}
	}
	if copied["/usr/local/bin/"] != b.out {
		t.Errorf("the binaries built into %s are not copied to /usr/local/bin/ (copies: %v)", b.out, copied)
	}
	if !examples {
		t.Error("examples/ is not copied to /examples")
	}
	if !data {
		t.Errorf("no /data owned by %s: a named volume there would be root's and unwritable", user)
	}

	// Its environment is the worker's.
	workerReads := workerEnv(t)
	for k := range final.env(t) {
		if !workerReads[k] {
			t.Errorf("ENV %s: the worker does not read it", k)
		}
	}
	if env := final.env(t); !strings.HasPrefix(env["HANDOFF_DEEP_STORAGE"], "/data/") || !strings.HasPrefix(env["HANDOFF_STAGING_DIR"], "/data/") {
		t.Errorf("deep storage and staging %q, %q: want them on /data", env["HANDOFF_DEEP_STORAGE"], env["HANDOFF_STAGING_DIR"])
	}
}

func TestDockerfileBuildCommand(t *testing.T) {
	df := parseDockerfile(t)
	b := findGoBuild(t, df)
	if b.env["CGO_ENABLED"] != "0" {
		t.Errorf("CGO_ENABLED=%q: want 0 for static binaries", b.env["CGO_ENABLED"])
	}
	args := " " + strings.Join(b.args, " ") + " "
	for _, want := range []string{" -trimpath ", " -ldflags=-s -w "} {
		if !strings.Contains(args, want) {
			t.Errorf("go build %s: lacks %q", args, strings.TrimSpace(want))
		}
	}
	if got := strings.Join(b.binaries(), " "); got != "worker starter httpcheck" {
		t.Errorf("go build makes %s, want worker starter httpcheck", got)
	}
	if !strings.HasSuffix(b.out, "/") {
		t.Errorf("-o %s: want a directory (ending in /) for several packages", b.out)
	}
	for _, cache := range []string{"/go/pkg/mod", "/root/.cache/go-build"} {
		if !strings.Contains(strings.Join(b.mounts, " "), "type=cache,target="+cache) {
			t.Errorf("RUN at line %d has no cache mount on %s (mounts %q)", b.in.line, cache, b.mounts)
		}
	}
}

// TestDockerfileBuildIsStatic runs the Dockerfile's go build here, into a
// temp dir, and checks what it makes: static, stripped executables.
func TestDockerfileBuildIsStatic(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the worker and starter")
	}
	b := findGoBuild(t, parseDockerfile(t))
	out := t.TempDir() + "/"
	args := append([]string{"build"}, b.args...)
	for i, a := range args {
		switch {
		case a == b.out && i > 0 && args[i-1] == "-o":
			args[i] = out
		case a == "-o="+b.out:
			args[i] = "-o=" + out
		}
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = repoRoot(t)
	cmd.Env = os.Environ()
	for k, v := range b.env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	if outb, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, outb)
	}
	for _, name := range b.binaries() {
		problems, err := notStatic(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range problems {
			t.Errorf("%s: %s", name, p)
		}
	}
}

// notStatic lists why the executable at path is not a static, stripped
// Linux executable that runs on an image without libc.
func notStatic(path string) ([]string, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var problems []string
	if f.Type != elf.ET_EXEC {
		problems = append(problems, fmt.Sprintf("ELF type %s, want a static executable (ET_EXEC)", f.Type))
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			problems = append(problems, fmt.Sprintf("has %s: dynamically linked", p.Type))
		}
	}
	if libs, err := f.ImportedLibraries(); err != nil || len(libs) != 0 {
		problems = append(problems, fmt.Sprintf("needs shared libraries %q (%v)", libs, err))
	}
	if f.Section(".symtab") != nil {
		problems = append(problems, "has a symbol table: -ldflags -s not applied")
	}
	return problems, nil
}

func TestNotStaticSeesADynamicExecutable(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	sh, _ = filepath.EvalSymlinks(sh)
	problems, err := notStatic(sh)
	if err != nil {
		t.Skipf("%s: %v", sh, err)
	}
	if len(problems) == 0 {
		t.Fatalf("%s passes as static", sh)
	}
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
