package activities

import "handoff/internal/metrics"

// passed takes the end of a batch whose records were all added: the open
// chunk's, or, with none open, the staged position itself (what lies
// between holds no record).
func (s *stream) passed(b batch) {
	if s.chunk != nil {
		s.chunk.passed(b.partition, b.res)
		return
	}
	if b.res.Next > s.res.To[b.partition] {
		s.res.To[b.partition] = b.res.Next
		s.dirty = true
	}
	s.res.Markers += int64(b.res.Markers)
	s.res.Aborted += int64(b.res.Aborted)
	s.skipped(int64(b.res.Markers), int64(b.res.Aborted), 0)
}

// skipped counts what the stream passed without a row.
func (s *stream) skipped(markers, aborted, noValue int64) {
	if m := s.a.Metrics; m != nil {
		m.Skipped(s.in.Spec.ID, metrics.SkippedMarker, markers)
		m.Skipped(s.in.Spec.ID, metrics.SkippedAborted, aborted)
		m.Skipped(s.in.Spec.ID, metrics.SkippedNoValue, noValue)
	}
}
