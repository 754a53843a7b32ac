// Package eviction is evictkit's node-pressure eviction manager for the
// kubelet: a drop-in replacement for k8s.io/kubernetes/pkg/kubelet/eviction
// at v1.37.2 with the same exported API and the same default behaviour.
//
// The package is split in two layers:
//
//   - a pure decision core (files core_*.go and the helpers they call:
//     signals, parsing, observation, thresholds, conditions, layout, ranking,
//     local storage, messages, admission) that maps configuration,
//     observations, previous state, pods and their stats and the current
//     time to a new state, node conditions, node-level reclaim steps and
//     ranked eviction candidates, each with the reason it was ranked where
//     it is. It performs no I/O, takes no locks and never reads a clock;
//   - a thin manager shell (manager*.go, evict.go, notifier files) that
//     gathers the inputs (Summary API, disk layout, active pods), runs
//     node-level garbage collection, kills pods, records events and
//     metrics, and guards the shared state with a lock.
//
// Wherever upstream's outcome depends on map iteration or slice order, the
// core picks one of upstream's possible outcomes by a fixed rule that is
// documented next to the code that applies it.
package eviction
