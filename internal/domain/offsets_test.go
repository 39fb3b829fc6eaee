package domain_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"handoff/internal/domain"
)

func TestOffsetsClone(t *testing.T) {
	t.Parallel()
	require.Nil(t, domain.Offsets(nil).Clone())

	o := domain.Offsets{0: 5, 2: 9}
	c := o.Clone()
	require.Equal(t, o, c)
	c[0] = 100
	c[7] = 1
	require.Equal(t, domain.Offsets{0: 5, 2: 9}, o, "the clone shares storage with the original")

	empty := domain.Offsets{}.Clone()
	require.NotNil(t, empty)
	require.Empty(t, empty)
}

func TestOffsetsPartitions(t *testing.T) {
	t.Parallel()
	require.Empty(t, domain.Offsets(nil).Partitions())
	require.Equal(t, []int32{0, 1, 2, 10, 11}, domain.Offsets{11: 0, 2: 0, 10: 0, 0: 0, 1: 0}.Partitions())
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
		{"same", domain.Offsets{0: 1, 1: 2}, domain.Offsets{1: 2, 0: 1}, true},
		{"other offset", domain.Offsets{0: 1, 1: 2}, domain.Offsets{0: 1, 1: 3}, false},
		{"extra partition", domain.Offsets{0: 1}, domain.Offsets{0: 1, 1: 0}, false},
		{"other partition", domain.Offsets{0: 1}, domain.Offsets{1: 1}, false},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, tt.a.Equal(tt.b), tt.name)
		require.Equal(t, tt.want, tt.b.Equal(tt.a), tt.name+" (swapped)")
	}
}

func TestOffsetsSum(t *testing.T) {
	t.Parallel()
	require.Zero(t, domain.Offsets(nil).Sum())
	require.EqualValues(t, 17, domain.Offsets{0: 5, 1: 0, 2: 12}.Sum())
	start, end := domain.Offsets{0: 5, 1: 0, 2: 12}, domain.Offsets{0: 9, 1: 3, 2: 12}
	require.EqualValues(t, 7, end.Sum()-start.Sum())
	require.EqualValues(t, int64(1)<<40+1, domain.Offsets{0: 1 << 40, 1: 1}.Sum())
}

func TestOffsetsReached(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		o, end domain.Offsets
		want   bool
	}{
		{"equal", domain.Offsets{0: 5, 1: 7}, domain.Offsets{0: 5, 1: 7}, true},
		{"past", domain.Offsets{0: 6, 1: 9}, domain.Offsets{0: 5, 1: 7}, true},
		{"one short", domain.Offsets{0: 5, 1: 6}, domain.Offsets{0: 5, 1: 7}, false},
		{"partition missing from o", domain.Offsets{0: 5}, domain.Offsets{0: 5, 1: 7}, false},
		{"partition missing from o, end 0", domain.Offsets{0: 5}, domain.Offsets{0: 5, 1: 0}, true},
		{"extra partition in o", domain.Offsets{0: 5, 1: 7, 2: 0}, domain.Offsets{0: 5, 1: 7}, true},
		{"empty end", domain.Offsets{0: 0}, domain.Offsets{}, true},
		{"nil o and end", nil, nil, true},
		{"nil o", nil, domain.Offsets{0: 1}, false},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, tt.o.Reached(tt.end), tt.name)
	}
}

func TestOffsetsString(t *testing.T) {
	t.Parallel()
	require.Equal(t, "", domain.Offsets(nil).String())
	require.Equal(t, "p0:12", domain.Offsets{0: 12}.String())
	require.Equal(t, "p0:12,p1:40,p10:3", domain.Offsets{10: 3, 1: 40, 0: 12}.String())
}
