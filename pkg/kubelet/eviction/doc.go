//evictkit:file wired

// Package eviction is the kubelet's node-pressure eviction manager.
//
// The package is split in two layers:
//
//   - a pure decision core (files core_*.go and the helpers they call:
//     signals and their rules, parsing, observation, thresholds,
//     conditions, layout, ranking, local storage, messages, admission)
//     that maps configuration, observations, previous state, pods and
//     their stats and the current time to a new state, node conditions,
//     node-level reclaim steps and ranked eviction candidates, each with
//     the reason it was ranked where it is. It performs no I/O, takes no
//     locks and never reads a clock;
//   - a thin manager shell (manager.go, synchronize.go, evict*.go,
//     cleanup.go, the notifier files) that gathers the inputs (Summary
//     API, disk layout, active pods), runs node-level garbage collection,
//     kills pods, records events and metrics, guards the shared state with
//     a lock, and reports what acting did back to the core (advance, and
//     replan after node-level reclaim, in core_advance.go): it never writes
//     the core's state itself.
//
// Wherever upstream's outcome depends on map iteration or slice order, the
// core picks one of upstream's possible outcomes by a fixed rule that is
// documented next to the code that applies it.
package eviction
