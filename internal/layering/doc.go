// Package layering holds no code: its test checks which packages each
// server links (go list -deps), so that a front end that never opens a
// store does not grow into the broker again.
package layering
