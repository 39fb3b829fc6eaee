package eventgen

import (
	"math"
	"strconv"
)

// rand is splitmix64: tiny, fast, and a pure function of (seed, index), so
// event i never depends on the events before it.
type rand struct{ state uint64 }

// newRand hashes the index before mixing in the seed: plain seed+i would
// make event i+1's draws event i's draws shifted by one.
func newRand(seed uint64, i int64) *rand {
	return &rand{state: mix(seed ^ mix(uint64(i)))}
}

func (r *rand) next() uint64 {
	r.state += 0x9E3779B97F4A7C15
	return mix(r.state)
}

func mix(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// float returns a number in [0, 1).
func (r *rand) float() float64 { return float64(r.next()>>11) / (1 << 53) }

// skewed returns an index in [0, n) where low indexes are much more likely:
// p^k with k > 1 piles up near 0, like real popularity.
func (r *rand) skewed(n int, k float64) int {
	return min(int(float64(n)*math.Pow(r.float(), k)), n-1)
}

var countries = []string{
	"US", "GB", "DE", "IN", "FR", "JP", "CA", "AU", "BR", "IT",
	"ES", "RU", "NL", "PL", "SE", "MX", "KR", "ID", "TR", "UA",
	"AR", "CH", "NO", "FI", "ZA", "NG", "EG", "VN", "NZ", "IE",
}

var subjects = []string{
	"History", "Geography", "Physics", "Chemistry", "Biology", "Mathematics",
	"Music", "Film", "Football", "Cricket", "Politics", "Economics",
	"Philosophy", "Art", "Architecture", "Medicine", "Astronomy", "Computing",
	"Literature", "Religion", "Railways", "Aviation", "Languages", "Cuisine",
}

const (
	pagesPerSubject = 2500   // 60,000 pages in all
	users           = 12_000 // registered users; a few do most edits
	bots            = 8
)

func pickPage(r *rand) string {
	s := subjects[r.skewed(len(subjects), 1.5)]
	return s + "_" + strconv.Itoa(r.skewed(pagesPerSubject, 3))
}

func pickUser(r *rand) string {
	if r.float() < 0.1 {
		return "Bot" + strconv.Itoa(r.skewed(bots, 1))
	}
	return "user" + strconv.Itoa(r.skewed(users, 4))
}

func pickCountry(r *rand) string { return countries[r.skewed(len(countries), 2)] }

func pickAction(r *rand) string {
	switch p := r.float(); {
	case p < 0.80:
		return "edit"
	case p < 0.95:
		return "create"
	default:
		return "delete"
	}
}

// pickDelta returns the change in bytes: creates add, deletes remove, edits
// mostly add a little.
func pickDelta(r *rand, action string) int64 {
	size := int64(r.skewed(5000, 2)) + 1
	switch action {
	case "create":
		return size + 100
	case "delete":
		return -size
	}
	if r.float() < 0.3 {
		return -size / 10
	}
	return size / 4
}
