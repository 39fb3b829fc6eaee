package domain

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestRetentionRulesFirstMatchDecides(t *testing.T) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	day := func(d int) (time.Time, time.Time) {
		s := now.Truncate(24*time.Hour).AddDate(0, 0, d)
		return s, s.AddDate(0, 0, 1)
	}
	keep30, err := ParseRetentionRules([]byte(`{"dataSource":"ds","rules":[{"type":"loadByPeriod","period":"P30D"},{"type":"dropForever"}]}`))
	require.NoError(t, err)
	before7, err := ParseRetentionRules([]byte(`{"dataSource":"ds","rules":[{"type":"dropBeforeByPeriod","period":"P7D"}]}`))
	require.NoError(t, err)
	for _, c := range []struct {
		name    string
		rules   RetentionRules
		day     int
		dropped bool
	}{
		{"today is in the period", keep30, 0, false},
		{"tomorrow: includeFuture", keep30, 1, false},
		{"30 days ago overlaps the period", keep30, -30, false},
		{"31 days ago: dropForever", keep30, -31, true},
		{"6 days ago is kept", before7, -6, false},
		{"8 days ago ended before the period", before7, -8, true},
		{"no rule matches: kept", RetentionRules{DataSource: "ds"}, -1000, false},
	} {
		s, e := day(c.day)
		require.Equal(t, c.dropped, c.rules.Drops(s, e, now), c.name)
	}
}

func TestRetentionRulesNameTheBadRule(t *testing.T) {
	for js, want := range map[string]string{
		`{"dataSource":"ds","rules":[{"type":"loadForever"},{"type":"dropByPeriod"}]}`:                    "rules[1].period: is missing",
		`{"dataSource":"ds","rules":[{"type":"keepForever"}]}`:                                            `rules[0].type: "keepForever" is not a rule`,
		`{"dataSource":"ds","rules":[{"type":"dropBeforeByPeriod","period":"P1M"}]}`:                      `rules: json`,
		`{"dataSource":"ds","rules":[{"type":"dropForever","period":"P1D"}]}`:                             "rules[0]: dropForever takes no period",
		`{"dataSource":"ds","rules":[{"type":"dropBeforeByPeriod","period":"P1D","includeFuture":true}]}`: "rules[0].includeFuture",
	} {
		_, err := ParseRetentionRules([]byte(js))
		require.ErrorContains(t, err, want, js)
	}
}
