package activities

import (
	"context"
	"fmt"
	"os"

	"handoff/internal/lake"
	"handoff/internal/segment"
)

// storedFile is a segment file put in deep storage: what its writer
// counted, where it is, and (when the segment goes to a table) its
// footer's statistics.
type storedFile struct {
	info   segment.Info
	uri    string
	footer lake.Footer
}

// storeSegmentFile closes w, reads f's footer when withFooter, and puts f
// in deep storage under key (deterministic, so a retry overwrites it). f
// is closed and removed whatever happens.
func (a *Activities) storeSegmentFile(ctx context.Context, w *segment.Writer, f *os.File, key string, withFooter bool) (storedFile, error) {
	defer os.Remove(f.Name())
	defer f.Close()
	var sf storedFile
	info, err := w.Close()
	if err != nil {
		return sf, err
	}
	sf.info = info
	if withFooter {
		if sf.footer, err = lake.ReadFooter(f.Name()); err != nil {
			return sf, err
		}
	}
	if err := putFile(ctx, a.Deep, key, f); err != nil {
		return sf, fmt.Errorf("write segment %s: %w", key, err)
	}
	sf.uri = a.Deep.URI(key)
	return sf, nil
}
