package restcatalog_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/require"

	"handoff/internal/lake"
	"handoff/internal/lake/laketest"
)

// The server agrees with the JDBC catalog at every moment while publishes
// commit (and some roll back after their table step): readers load the
// table through iceberg-go's SQL catalog (the JDBC rows), then through
// the REST server with iceberg-go's REST client, then through the SQL
// catalog again, over and over. The REST load must be a committed
// snapshot, never a rolled-back one, never older than the first SQL load
// and never newer than the second; when the two SQL loads agree, the REST
// load is that same snapshot. After each publish returns, a REST load
// sees it at once.
func TestLoadsAgreeWithTheJDBCCatalogWhilePublishing(t *testing.T) {
	t.Parallel()
	const (
		publications = 40
		readers      = 2
	)
	e := newEnv(t)
	ctx := context.Background()
	p := e.publisher("wiki")
	e.publish(p, 1, 5)

	var mu sync.Mutex
	committed := map[string]int{e.pointer("wiki"): 0} // location → order of commit
	orphans := map[string]bool{}
	type observation struct{ before, rest, after string }
	var seen []observation
	var sameSnapshot int

	stop := make(chan struct{})
	errs := make(chan error, readers)
	var wg sync.WaitGroup
	for range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- func() error {
				sqlCat, err := laketest.SQLCatalog(e.pool, lake.Config{})
				if err != nil {
					return err
				}
				restCat, err := laketest.RESTCatalog(ctx, e.srv.URL, goodToken)
				if err != nil {
					return err
				}
				defer restCat.Close()
				id := table.Identifier{"handoff", "wiki"}
				for {
					select {
					case <-stop:
						return nil
					default:
					}
					before, err := sqlCat.LoadTable(ctx, id)
					if err != nil {
						return err
					}
					viaREST, err := restCat.LoadTable(ctx, id)
					if err != nil {
						return err
					}
					after, err := sqlCat.LoadTable(ctx, id)
					if err != nil {
						return err
					}
					o := observation{before.MetadataLocation(), viaREST.MetadataLocation(), after.MetadataLocation()}
					if o.before == o.after {
						if o.rest != o.before || viaREST.CurrentSnapshot().SnapshotID != before.CurrentSnapshot().SnapshotID ||
							len(viaREST.Metadata().Snapshots()) != len(before.Metadata().Snapshots()) {
							return errors.New("the REST load differs from the JDBC catalog's, which did not move: " + o.rest + " against " + o.before)
						}
					}
					mu.Lock()
					seen = append(seen, o)
					if o.before == o.after {
						sameSnapshot++
					}
					mu.Unlock()
				}
			}()
		}()
	}

	restCat, err := laketest.RESTCatalog(ctx, e.srv.URL, goodToken)
	require.NoError(t, err)
	defer restCat.Close()
	for i := 1; i <= publications; i++ {
		if i%5 == 0 {
			orphan, err := p.PublishRolledBack(ctx, 5)
			require.NoError(t, err)
			require.NotEmpty(t, orphan)
			mu.Lock()
			orphans[orphan] = true
			mu.Unlock()
			continue
		}
		_, err := p.Publish(ctx, 5)
		require.NoError(t, err)
		loc := e.pointer("wiki")
		mu.Lock()
		committed[loc] = len(committed)
		mu.Unlock()
		tbl, err := restCat.LoadTable(ctx, table.Identifier{"handoff", "wiki"})
		require.NoError(t, err)
		require.Equal(t, loc, tbl.MetadataLocation(), "publication %d committed, and a load right after does not see it", i)
		time.Sleep(5 * time.Millisecond) // let the readers interleave
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}

	require.GreaterOrEqual(t, len(seen), 50, "too few loads to say anything")
	moved := 0
	for _, o := range seen {
		b, okB := committed[o.before]
		r, okR := committed[o.rest]
		a, okA := committed[o.after]
		require.False(t, orphans[o.rest], "the REST load served a rolled-back snapshot: %s", o.rest)
		require.True(t, okB && okR && okA, "a load saw an uncommitted metadata file: %+v", o)
		require.True(t, b <= r && r <= a, "REST load %d outside the JDBC loads around it, %d and %d", r, b, a)
		if b != a {
			moved++
		}
	}
	t.Logf("%d loads through REST between two through the JDBC rows, %d while a publish committed between them, %d with none; %d publications committed, %d rolled back",
		len(seen), moved, sameSnapshot, len(committed), len(orphans))
}
