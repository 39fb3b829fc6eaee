package domain

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// Retention rule types, with Druid's names and meaning: rules are read in
// order and the first that matches a segment's interval decides; a segment
// no rule matches is kept (Druid's default rule is loadForever).
const (
	RuleLoadForever        = "loadForever"
	RuleLoadByPeriod       = "loadByPeriod"
	RuleDropForever        = "dropForever"
	RuleDropByPeriod       = "dropByPeriod"
	RuleDropBeforeByPeriod = "dropBeforeByPeriod"
)

// RetentionRule is one rule. Period is an ISO-8601 (days, hours, minutes,
// seconds) or Go duration. IncludeFuture, for the ByPeriod load and drop
// rules, also matches intervals that end after now (default true, as in
// Druid).
type RetentionRule struct {
	Type          string   `json:"type"`
	Period        Duration `json:"period,omitempty"`
	IncludeFuture *bool    `json:"includeFuture,omitempty"`
}

// RetentionRules are a datasource's rules, in order, and how long the
// file of a segment that became unused (dropped, or replaced by a
// compaction) stays in deep storage before it is killed (default P1D).
type RetentionRules struct {
	DataSource      string          `json:"dataSource"`
	Rules           []RetentionRule `json:"rules"`
	KillGracePeriod Duration        `json:"killGracePeriod,omitempty"`
}

// DefaultKillGracePeriod is the default of KillGracePeriod: Druid's kill
// also keeps a day.
const DefaultKillGracePeriod = 24 * time.Hour

// KillGrace is KillGracePeriod or its default.
func (r RetentionRules) KillGrace() time.Duration {
	if r.KillGracePeriod > 0 {
		return r.KillGracePeriod.D()
	}
	return DefaultKillGracePeriod
}

// ParseRetentionRules decodes and validates rules, refusing unknown
// fields.
func ParseRetentionRules(b []byte) (RetentionRules, error) {
	var r RetentionRules
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return RetentionRules{}, fmt.Errorf("retention rules: %w", err)
	}
	return r, r.Validate()
}

// Validate reports the first rule that is wrong, by its index.
func (r RetentionRules) Validate() error {
	if err := ValidateName("dataSource", r.DataSource); err != nil {
		return err
	}
	for i, rule := range r.Rules {
		path := fmt.Sprintf("rules[%d]", i)
		switch rule.Type {
		case RuleLoadForever, RuleDropForever:
			if rule.Period != 0 || rule.IncludeFuture != nil {
				return &FieldError{Path: path, Msg: rule.Type + " takes no period or includeFuture"}
			}
		case RuleLoadByPeriod, RuleDropByPeriod, RuleDropBeforeByPeriod:
			if rule.Period <= 0 {
				return &FieldError{Path: path + ".period", Msg: "is missing: " + rule.Type + " needs a period such as \"P30D\""}
			}
			if rule.Type == RuleDropBeforeByPeriod && rule.IncludeFuture != nil {
				return &FieldError{Path: path + ".includeFuture", Msg: "dropBeforeByPeriod takes no includeFuture"}
			}
		case "":
			return &FieldError{Path: path + ".type", Msg: "is missing: want loadForever, loadByPeriod, dropForever, dropByPeriod or dropBeforeByPeriod"}
		default:
			return &FieldError{Path: path + ".type", Msg: fmt.Sprintf("%q is not a rule: want loadForever, loadByPeriod, dropForever, dropByPeriod or dropBeforeByPeriod", rule.Type)}
		}
	}
	return nil
}

// Drops reports whether the rules drop a segment of [start, end) at now.
func (r RetentionRules) Drops(start, end, now time.Time) bool {
	for _, rule := range r.Rules {
		if match, drop := rule.decides(start, end, now); match {
			return drop
		}
	}
	return false
}

// decides reports whether the rule matches the interval and, if so,
// whether it drops it.
func (r RetentionRule) decides(start, end, now time.Time) (match, drop bool) {
	from := now.Add(-r.Period.D())
	future := r.IncludeFuture == nil || *r.IncludeFuture
	// The interval overlaps [now - period, now], or with includeFuture
	// [now - period, ∞).
	inPeriod := end.After(from) && (future || start.Before(now))
	switch r.Type {
	case RuleLoadForever:
		return true, false
	case RuleDropForever:
		return true, true
	case RuleLoadByPeriod:
		return inPeriod, false
	case RuleDropByPeriod:
		return inPeriod, true
	case RuleDropBeforeByPeriod:
		return !end.After(from), true
	}
	return false, false
}
