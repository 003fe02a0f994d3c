package broker

import "github.com/rocketgo/rocketgo/remoting"

// SignOutgoing has fn add credentials to every request the broker sends
// to name servers and to its master (registration, a slave's config
// sync): ACL 2.0's innerClientAuthenticationCredentials. Call it before
// Start.
func (b *Broker) SignOutgoing(fn func(req *remoting.Command)) { b.registrar.client.SetSigner(fn) }
