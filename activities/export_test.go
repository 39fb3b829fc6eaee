package activities

// GroupsDescribed counts the group workflows watches described.
func (a *Activities) GroupsDescribed() int64 { return a.describes.Load() }

// StreamsHere says whether a stream of the group's workflow id runs in
// this process and heartbeat.
func (a *Activities) StreamsHere(id string) bool {
	ls := a.local.get(id)
	return ls != nil && ls.beaten()
}
