package domain_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
)

func TestOffsetsClone(t *testing.T) {
	t.Parallel()
	require.Nil(t, domain.Offsets(nil).Clone())

	o := domain.Offsets{domain.P(0): 5, domain.P(2): 9}
	c := o.Clone()
	require.Equal(t, o, c)
	c[domain.P(0)] = 100
	c[domain.P(7)] = 1
	require.Equal(t, domain.Offsets{domain.P(0): 5, domain.P(2): 9}, o, "the clone shares storage with the original")

	empty := domain.Offsets{}.Clone()
	require.NotNil(t, empty)
	require.Empty(t, empty)
}

func TestOffsetsPartitions(t *testing.T) {
	t.Parallel()
	require.Empty(t, domain.Offsets(nil).Partitions())
	require.Equal(t, []domain.Partition{domain.P(0), domain.P(1), domain.P(2), domain.P(10), domain.P(11)}, domain.Offsets{domain.P(11): 0, domain.P(2): 0, domain.P(10): 0, domain.P(0): 0, domain.P(1): 0}.Partitions())
}

func TestOffsetsEqual(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		a, b domain.Offsets
		want bool
	}{
		{"both nil", nil, nil, true},
		{"nil and empty", nil, domain.Offsets{}, true},
		{"same", domain.Offsets{domain.P(0): 1, domain.P(1): 2}, domain.Offsets{domain.P(1): 2, domain.P(0): 1}, true},
		{"other offset", domain.Offsets{domain.P(0): 1, domain.P(1): 2}, domain.Offsets{domain.P(0): 1, domain.P(1): 3}, false},
		{"extra partition", domain.Offsets{domain.P(0): 1}, domain.Offsets{domain.P(0): 1, domain.P(1): 0}, false},
		{"other partition", domain.Offsets{domain.P(0): 1}, domain.Offsets{domain.P(1): 1}, false},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, tt.a.Equal(tt.b), tt.name)
		require.Equal(t, tt.want, tt.b.Equal(tt.a), tt.name+" (swapped)")
	}
}

func TestOffsetsSum(t *testing.T) {
	t.Parallel()
	require.Zero(t, domain.Offsets(nil).Sum())
	require.EqualValues(t, 17, domain.Offsets{domain.P(0): 5, domain.P(1): 0, domain.P(2): 12}.Sum())
	start, end := domain.Offsets{domain.P(0): 5, domain.P(1): 0, domain.P(2): 12}, domain.Offsets{domain.P(0): 9, domain.P(1): 3, domain.P(2): 12}
	require.EqualValues(t, 7, end.Sum()-start.Sum())
	require.EqualValues(t, int64(1)<<40+1, domain.Offsets{domain.P(0): 1 << 40, domain.P(1): 1}.Sum())
}

func TestOffsetsReached(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		o, end domain.Offsets
		want   bool
	}{
		{"equal", domain.Offsets{domain.P(0): 5, domain.P(1): 7}, domain.Offsets{domain.P(0): 5, domain.P(1): 7}, true},
		{"past", domain.Offsets{domain.P(0): 6, domain.P(1): 9}, domain.Offsets{domain.P(0): 5, domain.P(1): 7}, true},
		{"one short", domain.Offsets{domain.P(0): 5, domain.P(1): 6}, domain.Offsets{domain.P(0): 5, domain.P(1): 7}, false},
		{"partition missing from o", domain.Offsets{domain.P(0): 5}, domain.Offsets{domain.P(0): 5, domain.P(1): 7}, false},
		{"partition missing from o, end 0", domain.Offsets{domain.P(0): 5}, domain.Offsets{domain.P(0): 5, domain.P(1): 0}, true},
		{"extra partition in o", domain.Offsets{domain.P(0): 5, domain.P(1): 7, domain.P(2): 0}, domain.Offsets{domain.P(0): 5, domain.P(1): 7}, true},
		{"empty end", domain.Offsets{domain.P(0): 0}, domain.Offsets{}, true},
		{"nil o and end", nil, nil, true},
		{"nil o", nil, domain.Offsets{domain.P(0): 1}, false},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, tt.o.Reached(tt.end), tt.name)
	}
}

func TestOffsetsString(t *testing.T) {
	t.Parallel()
	require.Equal(t, "", domain.Offsets(nil).String())
	require.Equal(t, "p0:12", domain.Offsets{domain.P(0): 12}.String())
	require.Equal(t, "p0:12,p1:40,p10:3", domain.Offsets{domain.P(10): 3, domain.P(1): 40, domain.P(0): 12}.String())
}
