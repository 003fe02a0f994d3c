//go:build race

package store

// raceEnabled: under the race detector sync.Pool drops items at random, so
// allocation budgets that rely on a pool are not checked.
const raceEnabled = true
