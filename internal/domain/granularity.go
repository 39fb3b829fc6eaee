package domain

import (
	"fmt"
	"strings"
	"time"
)

// Granularity is a calendar bucket size in UTC: segment intervals and query
// time truncation use it.
type Granularity string

// The granularities a spec may name.
const (
	GranularityNone          Granularity = "none"
	GranularitySecond        Granularity = "second"
	GranularityMinute        Granularity = "minute"
	GranularityFiveMinute    Granularity = "five_minute"
	GranularityFifteenMinute Granularity = "fifteen_minute"
	GranularityHour          Granularity = "hour"
	GranularitySixHour       Granularity = "six_hour"
	GranularityDay           Granularity = "day"
	GranularityWeek          Granularity = "week"
	GranularityMonth         Granularity = "month"
	GranularityYear          Granularity = "year"
)

var fixedSteps = map[Granularity]time.Duration{
	GranularitySecond:        time.Second,
	GranularityMinute:        time.Minute,
	GranularityFiveMinute:    5 * time.Minute,
	GranularityFifteenMinute: 15 * time.Minute,
	GranularityHour:          time.Hour,
	GranularitySixHour:       6 * time.Hour,
	GranularityDay:           24 * time.Hour,
}

// ParseGranularity accepts the names above in any case.
func ParseGranularity(s string) (Granularity, error) {
	g := Granularity(strings.ToLower(s))
	switch g {
	case GranularityNone, GranularityWeek, GranularityMonth, GranularityYear:
		return g, nil
	}
	if _, ok := fixedSteps[g]; ok {
		return g, nil
	}
	return "", fmt.Errorf("%q is not a granularity: want one of none, second, minute, five_minute, fifteen_minute, hour, six_hour, day, week, month, year", s)
}

// Truncate returns the start of the bucket holding t (t itself for none).
func (g Granularity) Truncate(t time.Time) time.Time {
	t = t.UTC()
	switch g {
	case GranularityNone, "":
		return t
	case GranularityWeek: // ISO weeks start on Monday
		day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
		return day.AddDate(0, 0, -((int(day.Weekday()) + 6) % 7))
	case GranularityMonth:
		return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
	case GranularityYear:
		return time.Date(t.Year(), 1, 1, 0, 0, 0, 0, time.UTC)
	}
	return t.Truncate(fixedSteps[g])
}

// Next returns the start of the bucket after the one that starts at start.
func (g Granularity) Next(start time.Time) time.Time {
	switch g {
	case GranularityWeek:
		return start.AddDate(0, 0, 7)
	case GranularityMonth:
		return start.AddDate(0, 1, 0)
	case GranularityYear:
		return start.AddDate(1, 0, 0)
	}
	return start.Add(fixedSteps[g])
}

// Covers reports whether every bucket of f lies inside one bucket of g:
// times truncated to f then to g land where truncating straight to g puts
// them, and a g-long segment never splits an f bucket. Every granularity
// covers none and itself; weeks cover days and finer but months and years
// do not cover weeks.
func (g Granularity) Covers(f Granularity) bool {
	g, f = g.orNone(), f.orNone()
	switch {
	case f == GranularityNone || g == f:
		return true
	case g == GranularityNone:
		return false
	}
	gs, gFixed := fixedSteps[g]
	fs, fFixed := fixedSteps[f]
	switch {
	case gFixed && fFixed:
		return gs%fs == 0
	case gFixed: // f is a week, month or year
		return false
	case fFixed: // every fixed step divides a day, and weeks, months and years start at midnight
		return true
	}
	return g == GranularityYear && f == GranularityMonth
}

func (g Granularity) orNone() Granularity {
	if g == "" {
		return GranularityNone
	}
	return g
}
