package registry

import "fmt"

// NotFoundError: the registry does not know the schema id (HTTP 404).
type NotFoundError struct {
	ID int
	// Subject and Version, for a reference that is missing: the schema ID
	// names exists, but one it references does not.
	Subject string
	Version int
}

func (e *NotFoundError) Error() string {
	if e.Subject != "" {
		return fmt.Sprintf("schema id %d references subject %q version %d, which the schema registry does not have (404)", e.ID, e.Subject, e.Version)
	}
	return fmt.Sprintf("schema id %d is not in the schema registry (404)", e.ID)
}

// UnavailableError: the registry could not be asked, or would not answer,
// after the client's retries. Retrying later may succeed.
type UnavailableError struct {
	ID     int
	Status int // HTTP status, 0 when no answer came
	Err    error
}

func (e *UnavailableError) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("schema registry: fetch schema id %d: HTTP %d: %v", e.ID, e.Status, e.Err)
	}
	return fmt.Sprintf("schema registry: fetch schema id %d: %v", e.ID, e.Err)
}

func (e *UnavailableError) Unwrap() error { return e.Err }
