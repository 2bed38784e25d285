//go:build race

package main

// raceEnabled: the flag walk is skipped under the race detector (its
// shadow memory defeats the address-space cap, and it would take minutes).
const raceEnabled = true
