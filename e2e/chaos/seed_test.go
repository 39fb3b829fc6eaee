package chaos

import (
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"
)

// SeedEnv fixes the seed of the scenarios' random choices (when and what
// to kill), to replay a run; each scenario logs the seed it used.
const SeedEnv = "HANDOFF_CHAOS_SEED"

func newRand(t *testing.T) *rand.Rand {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv(SeedEnv); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: want an unsigned integer", SeedEnv, s)
		}
		seed = v
	}
	t.Logf("random choices from %s=%d", SeedEnv, seed)
	return rand.New(rand.NewPCG(seed, 0x6368616f73))
}

// between returns a random duration in [lo, hi).
func between(r *rand.Rand, lo, hi time.Duration) time.Duration {
	return lo + time.Duration(r.Int64N(int64(hi-lo)))
}
