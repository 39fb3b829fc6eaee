package lake

import (
	"context"
	"fmt"

	"github.com/apache/iceberg-go"
)

// ReferencedDataFiles returns the URIs of the data files live in any
// snapshot the datasource's table keeps (so a time-travel read of it may
// still open them), or an empty set when it has no table. A kill must
// leave these files alone until their last snapshot expires.
func (l *Lake) ReferencedDataFiles(ctx context.Context, ds string) (map[string]bool, error) {
	refs := map[string]bool{}
	loc, err := l.pointer(ctx, l.pool, ds, false)
	if err != nil || loc == "" {
		return refs, err
	}
	meta, err := l.metadata(ctx, loc)
	if err != nil {
		return nil, err
	}
	fs := newStoreIO(ctx, l.deep)
	seen := map[string]bool{} // manifests are shared between snapshots
	for _, s := range meta.Snapshots() {
		manifests, err := s.Manifests(fs)
		if err != nil {
			return nil, fmt.Errorf("table %s: read manifest list %s: %w", l.Identifier(ds), s.ManifestList, err)
		}
		for _, m := range manifests {
			if m.ManifestContent() != iceberg.ManifestContentData || seen[m.FilePath()] {
				continue
			}
			seen[m.FilePath()] = true
			entries, err := m.FetchEntries(fs, true)
			if err != nil {
				return nil, fmt.Errorf("table %s: read manifest %s: %w", l.Identifier(ds), m.FilePath(), err)
			}
			for _, e := range entries {
				refs[e.DataFile().FilePath()] = true
			}
		}
	}
	return refs, nil
}
