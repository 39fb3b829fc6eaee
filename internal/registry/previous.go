package registry

import (
	"context"
	"errors"
	"slices"
)

// Previous returns the version before s in its subject (the first subject
// the registry lists for its id), nil when s is its subject's first or the
// registry cannot say (no subject: a schema seeded by id alone). Decoders
// compare the two to refuse an evolution the spec cannot read; the answer
// is remembered with s. Errors are *UnavailableError.
func (c *Client) Previous(ctx context.Context, s *Schema) (*Schema, error) {
	v, err := s.Memo("previous", func() (any, error) { return c.previous(ctx, s) })
	if err != nil {
		s.forget("previous") // an outage is not an answer
		return nil, err
	}
	prev, _ := v.(*Schema)
	return prev, nil
}

func (c *Client) previous(ctx context.Context, s *Schema) (*Schema, error) {
	var nf *NotFoundError
	var used []struct {
		Subject string
		Version int
	}
	err := c.try(ctx, s.ID, func(ctx context.Context) error {
		vs, err := c.sr.SchemaVersionsByID(ctx, s.ID)
		for _, v := range vs {
			used = append(used, struct {
				Subject string
				Version int
			}{v.Subject, v.Version})
		}
		return err
	})
	switch {
	case errors.As(err, &nf):
		return nil, nil
	case err != nil:
		return nil, err
	case len(used) == 0:
		return nil, nil
	}
	subject, version := used[0].Subject, used[0].Version
	var versions []int
	err = c.try(ctx, s.ID, func(ctx context.Context) (err error) {
		versions, err = c.sr.SubjectVersions(ctx, subject)
		return err
	})
	switch {
	case errors.As(err, &nf):
		return nil, nil
	case err != nil:
		return nil, err
	}
	slices.Sort(versions)
	before := -1
	for _, v := range versions {
		if v < version {
			before = v
		}
	}
	if before < 0 {
		return nil, nil
	}
	var id int
	err = c.try(ctx, s.ID, func(ctx context.Context) error {
		ss, err := c.sr.SchemaByVersion(ctx, subject, before)
		id = ss.ID
		return err
	})
	switch {
	case errors.As(err, &nf):
		return nil, nil
	case err != nil:
		return nil, err
	}
	prev, err := c.Schema(ctx, id)
	if errors.As(err, &nf) {
		return nil, nil
	}
	return prev, err
}

func (s *Schema) forget(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.memo, key)
}
