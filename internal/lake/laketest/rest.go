package laketest

import (
	"context"
	"fmt"

	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"
)

// RESTCatalog opens the Iceberg REST catalog at uri (the server's base
// URL, without /v1) with bearer token token through iceberg-go's own REST
// client, an implementation handoff did not write; opts add to it (TLS,
// properties for the tables' file IO).
func RESTCatalog(ctx context.Context, uri, token string, opts ...rest.Option) (*rest.Catalog, error) {
	cat, err := rest.NewCatalog(ctx, "handoff", uri, append([]rest.Option{rest.WithOAuthToken(token)}, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("open REST catalog %s: %w", uri, err)
	}
	return cat, nil
}

// LoadREST opens the datasource's table in namespace through the REST
// catalog at uri.
func LoadREST(ctx context.Context, uri, token, namespace, ds string, opts ...rest.Option) (*table.Table, error) {
	cat, err := RESTCatalog(ctx, uri, token, opts...)
	if err != nil {
		return nil, err
	}
	defer cat.Close()
	return cat.LoadTable(ctx, table.Identifier{namespace, ds})
}
