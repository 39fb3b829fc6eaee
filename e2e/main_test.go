package e2e

import (
	"testing"

	"handoff/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }
