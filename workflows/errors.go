package workflows

import (
	"errors"

	"go.temporal.io/sdk/temporal"
)

// errorMessage is what a person needs of an activity or child error: the
// application error's own message, without the SDK's wrapping.
func errorMessage(err error) string {
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		if t := app.Type(); t != "" && t != "wrapError" {
			return t + ": " + app.Message()
		}
		return app.Message()
	}
	return err.Error()
}

// isErrorType reports whether err carries an application error of that type.
func isErrorType(err error, typ string) bool {
	var app *temporal.ApplicationError
	return errors.As(err, &app) && app.Type() == typ
}
