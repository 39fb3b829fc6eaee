// Package searchattr registers the custom search attributes that
// supervisors and compaction workflows set, so the Temporal UI and CLI can
// filter workflows by supervisor, datasource, topic and state. Temporal refuses to start a
// workflow that sets an unregistered attribute, so the worker ensures them
// at start.
package searchattr

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"handoff/internal/domain"
)

// Names are the custom search attributes handoff uses, all of type Keyword.
var Names = []string{
	domain.SearchAttributeSupervisor,
	domain.SearchAttributeDataSource,
	domain.SearchAttributeTopic,
	domain.SearchAttributeState,
	domain.SearchAttributeCompactionState,
}

// DevServerArgs are the `temporal server start-dev` flags that register
// Names from the start.
func DevServerArgs() []string {
	args := make([]string, 0, 2*len(Names))
	for _, n := range Names {
		args = append(args, "--search-attribute", n+"=Keyword")
	}
	return args
}

// Ensure registers those of Names that the namespace lacks and returns
// them; it changes nothing when all are there. An attribute registered
// with another type than Keyword is an error: it cannot be changed.
func Ensure(ctx context.Context, c client.Client, namespace string) (added []string, err error) {
	op := c.OperatorService()
	have, err := op.ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: namespace})
	if err != nil {
		return nil, fmt.Errorf("list search attributes of namespace %q: %w", namespace, err)
	}
	missing := map[string]enums.IndexedValueType{}
	for _, n := range Names {
		t, ok := have.GetCustomAttributes()[n]
		if !ok {
			t, ok = have.GetSystemAttributes()[n]
		}
		switch {
		case !ok:
			missing[n] = enums.INDEXED_VALUE_TYPE_KEYWORD
			added = append(added, n)
		case t != enums.INDEXED_VALUE_TYPE_KEYWORD:
			return nil, fmt.Errorf("search attribute %s of namespace %q is of type %s, want Keyword", n, namespace, t)
		}
	}
	if len(missing) == 0 {
		return nil, nil
	}
	_, err = op.AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{Namespace: namespace, SearchAttributes: missing})
	var exists *serviceerror.AlreadyExists
	if errors.As(err, &exists) {
		// Another worker added them first.
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("add search attributes %v to namespace %q: %w", added, namespace, err)
	}
	slices.Sort(added)
	return added, nil
}
