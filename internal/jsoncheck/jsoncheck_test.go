package jsoncheck

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

type inner struct {
	Every time.Duration `json:"every"`
}

type leaky struct {
	Name      string
	Every     time.Duration `json:"every"`
	Fraction  float64       `json:"fraction"`
	Nested    []inner       `json:"nested"`
	unexposed int
}

type clean struct {
	Name  string `json:"name"`
	Every string `json:"every"`
	Count int    `json:"count,omitempty"`
}

func TestCheckFindsGoNamesAndNumericDurations(t *testing.T) {
	t.Parallel()
	var v leaky
	Fill(&v)
	if v.unexposed != 7 || v.Every != Sentinel || len(v.Nested) != 1 || v.Nested[0].Every != Sentinel {
		t.Fatalf("Fill left fields zero: %+v", v)
	}
	doc, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	err = Check(doc)
	if err == nil {
		t.Fatalf("Check passed %s", doc)
	}
	for _, want := range []string{`$.Name: key "Name"`, "$.every: 1234567891 is a duration", "$.nested[0].every: 1234567891"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Check = %v, want it to contain %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "fraction") {
		t.Errorf("a float that is not the sentinel was reported: %v", err)
	}
}

func TestCheckFindsDurationsInOtherUnits(t *testing.T) {
	t.Parallel()
	for _, n := range []string{"1234567.891", "1234.567891", "1.234567891"} {
		if Check([]byte(`{"took":`+n+`}`)) == nil {
			t.Errorf("%s passed", n)
		}
	}
}

func TestCheckPassesTheConvention(t *testing.T) {
	t.Parallel()
	var v clean
	Fill(&v)
	v.Every = Sentinel.String()
	doc, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	// Two values in a row, as a watch prints them.
	if err := Check(append(append(doc, '\n'), doc...)); err != nil {
		t.Fatalf("Check(%s) = %v", doc, err)
	}
	if _, err := time.ParseDuration(v.Every); err != nil {
		t.Fatal(err)
	}
	if Check([]byte(" ")) == nil || Check([]byte("{")) == nil {
		t.Error("an empty or broken document passed")
	}
}
