package parse

// WithoutDirect makes p parse JSON by the general path only (direct.go),
// for tests that compare the two.
func WithoutDirect(p *Parser) { p.direct = nil }

// TakesDirect reports whether p parses JSON by the direct path.
func TakesDirect(p *Parser) bool { return p.direct != nil }
