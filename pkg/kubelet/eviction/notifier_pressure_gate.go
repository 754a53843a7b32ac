//evictkit:file EvictionCgroupV2Notifier

package eviction

import "k8s.io/component-base/featuregate"

// evictionCgroupV2Notifier: on cgroup v2, memory notifiers woken by a PSI
// trigger and memory.events (notifier_pressure_linux.go).
const evictionCgroupV2Notifier featuregate.Feature = "EvictionCgroupV2Notifier"

var _ = addAlphaFeature(alphaFeature{gate: evictionCgroupV2Notifier})
