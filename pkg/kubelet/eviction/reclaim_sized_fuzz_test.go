//evictkit:file EvictionReclaimSized

package eviction

// What EvictionReclaimSized adds to the fuzz targets: its gate, on as the
// scenario's first alpha bit says; the reference model sizes victims with
// it; the paths of a sized eviction.
var _ = addFzAlphaFeature(fzAlphaFeature{
	order: 1,
	gate:  evictionReclaimSized,
	on:    func(a fzGates) bool { return a.reclaimSized },
	model: func(g *refGates, on bool) { g.reclaimSized = on },
	targetPaths: func(t *reclaimTarget, paths map[string]bool) {
		if t.sizing != nil {
			switch {
			case len(t.victims) > 1 && t.victims[len(t.victims)-1].rank != len(t.victims)-1:
				paths["sized-several-past-critical"] = true
			case len(t.victims) > 1:
				paths["sized-several"] = true
			case !t.sizing.covered && len(t.ranked) > 1:
				paths["sized-fallback-one"] = true
			}
		}
	},
	promises: []string{
		"sized-several",
		"sized-several-past-critical",
		"sized-fallback-one",
	},
})
