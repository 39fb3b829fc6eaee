package activities

import (
	"errors"

	"go.temporal.io/sdk/temporal"

	"handoff/internal/domain"
	"handoff/internal/kafka"
	"handoff/internal/pgstore"
)

// classify turns errors that a retry cannot fix into non-retryable
// application errors with a stable type name; others pass through and are
// retried with back-off.
func classify(err error) error {
	var mismatch *pgstore.MismatchError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &mismatch):
		return temporal.NewNonRetryableApplicationError(err.Error(), domain.ErrOffsetMismatch, nil)
	case errors.Is(err, pgstore.ErrSequenceConflict):
		return temporal.NewNonRetryableApplicationError(err.Error(), domain.ErrSequenceConflict, nil)
	case errors.Is(err, kafka.ErrTopicNotFound):
		return temporal.NewNonRetryableApplicationError(err.Error(), domain.ErrTopicNotFound, nil)
	}
	return err
}
