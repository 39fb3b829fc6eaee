// Package archtest holds the tests of the module's shape rather than of
// its behaviour: that every package under internal/ stays below workflows/
// and activities/ (they may import internal packages, never the other way
// round), and that every package has a package comment saying what it is
// for. It has no code of its own.
package archtest
