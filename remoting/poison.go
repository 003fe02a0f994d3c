//go:build !race

package remoting

// poisonRecycled: race-detector builds (make test) poison recycled commands.
const poisonRecycled = false
