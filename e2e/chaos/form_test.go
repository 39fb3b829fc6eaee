package chaos

import "os"

// FormEnv selects the long form of the scenarios: HANDOFF_CHAOS=long (what
// `make chaos` sets). Anything else runs the short form, which `go test
// ./...` runs.
const FormEnv = "HANDOFF_CHAOS"

func long() bool { return os.Getenv(FormEnv) == "long" }

func form() string {
	if long() {
		return "long"
	}
	return "short"
}

// pick returns short or long by the form.
func pick[T any](short, longer T) T {
	if long() {
		return longer
	}
	return short
}
