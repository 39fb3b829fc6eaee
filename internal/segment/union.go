package segment

import (
	"fmt"
	"slices"

	"handoff/internal/domain"
)

// UnionSchema reads only the footers of files and returns the schema that
// holds all of their rows: every file's dimensions, in first-seen order,
// and their metrics, which must be the same in every file. A dimension
// whose type differs between files is an error naming it and both files.
func UnionSchema(paths []string) (domain.Schema, error) {
	var (
		union domain.Schema
		from  = map[string]string{} // dimension name → first file with it
		types = map[string]domain.ColumnType{}
	)
	for i, path := range paths {
		s, err := ReadSchema(path)
		if err != nil {
			return domain.Schema{}, err
		}
		if i == 0 {
			union.Metrics = s.Metrics
		} else if !slices.Equal(s.Metrics, union.Metrics) {
			return domain.Schema{}, fmt.Errorf("segment %s has metrics %v, segment %s has %v", path, s.Metrics, paths[0], union.Metrics)
		}
		for _, d := range s.Dims {
			t, seen := types[d.Name]
			switch {
			case !seen:
				types[d.Name], from[d.Name] = d.Type, path
				union.Dims = append(union.Dims, d)
			case t != d.Type:
				return domain.Schema{}, fmt.Errorf("dimension %q is %s in segment %s but %s in segment %s", d.Name, d.Type, path, t, from[d.Name])
			}
		}
	}
	return union, nil
}

// ReadSchema reads the schema from a file's footer.
func ReadSchema(path string) (domain.Schema, error) {
	if run, err := isRun(path); err != nil {
		return domain.Schema{}, fmt.Errorf("read schema of segment %s: %w", path, err)
	} else if run {
		s, err := readRunFileSchema(path)
		if err != nil {
			return domain.Schema{}, fmt.Errorf("read schema of run %s: %w", path, err)
		}
		return s, nil
	}
	pf, f, err := openParquet(path)
	if err != nil {
		return domain.Schema{}, fmt.Errorf("read schema of segment %s: %w", path, err)
	}
	defer f.Close()
	s, err := fileSchemaOf(pf)
	if err == nil {
		err = checkLayout(pf.Schema(), s)
	}
	if err != nil {
		return domain.Schema{}, fmt.Errorf("read schema of segment %s: %w", path, err)
	}
	return s, nil
}
