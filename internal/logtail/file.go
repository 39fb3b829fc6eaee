package logtail

import (
	"fmt"
	"io"
	"os"
)

// File returns the last max bytes of the log file at path, marked when cut;
// a file it cannot read comes back as a note saying why.
func File(path string, max int64) string {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Sprintf("(log: %v)", err)
	}
	prefix := ""
	if fi.Size() > max {
		if _, err := f.Seek(fi.Size()-max, io.SeekStart); err != nil {
			return fmt.Sprintf("(log: %v)", err)
		}
		prefix = fmt.Sprintf("... (%d bytes cut)\n", fi.Size()-max)
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return fmt.Sprintf("(log: %v)", err)
	}
	return prefix + string(b)
}
