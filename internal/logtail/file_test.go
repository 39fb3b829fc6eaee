package logtail

import (
	"os"
	"path/filepath"
	"testing"
)

func TestFileKeepsTheEnd(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.log")
	if err := os.WriteFile(path, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := File(path, 4); got != "... (6 bytes cut)\n6789" {
		t.Fatalf("File(4) = %q", got)
	}
	if got := File(path, 100); got != "0123456789" {
		t.Fatalf("File(100) = %q", got)
	}
	if got := File(filepath.Join(t.TempDir(), "none"), 4); got[:9] != "(no log: " {
		t.Fatalf("missing file = %q", got)
	}
}
