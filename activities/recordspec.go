package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"go.temporal.io/sdk/temporal"

	"handoff/internal/domain"
	"handoff/internal/lake"
	"handoff/internal/pgstore"
	"handoff/internal/protocol"
)

// RecordSpec appends a supervisor's accepted spec to its history in
// Postgres, unless it equals the latest recorded one.
//
// A spec whose columns the datasource's Iceberg table cannot take (a
// column's type changed) is refused, naming the column.
func (a *Activities) RecordSpec(ctx context.Context, in protocol.RecordSpecInput) (protocol.RecordSpecResult, error) {
	if a.Tables != nil && in.Spec.IOConfig.TableOn() {
		if err := a.Tables.CheckSchema(ctx, in.Spec.DataSchema.DataSource, in.Spec.DataSchema.DeclaredSchema()); err != nil {
			var se *lake.SchemaError
			if errors.As(err, &se) {
				return protocol.RecordSpecResult{}, temporal.NewNonRetryableApplicationError(
					"dataSchema.dimensionsSpec/metricsSpec: "+err.Error(), domain.ErrTableSchema, nil)
			}
			return protocol.RecordSpecResult{}, err
		}
	}
	spec, err := json.Marshal(in.Spec)
	if err != nil {
		return protocol.RecordSpecResult{}, fmt.Errorf("encode spec of supervisor %q: %w", in.SupervisorID, err)
	}
	recorded, version, err := a.Store.RecordSpecChange(ctx, in.SupervisorID, spec, pgstore.SpecChange{ChangedBy: in.ChangedBy, Reason: in.Reason})
	if err != nil {
		return protocol.RecordSpecResult{}, err
	}
	if recorded && in.ChangedBy == pgstore.ChangedByAutoscaler && in.Direction != "" && a.Metrics != nil {
		a.Metrics.AutoscalerAction(in.SupervisorID, in.Direction)
	}
	return protocol.RecordSpecResult{Recorded: recorded, Version: version}, nil
}
