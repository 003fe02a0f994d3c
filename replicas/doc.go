// Package replicas is the broker side of Apache RocketMQ 5.x controller mode
// (Apache's ReplicasManager and BrokerOuterAPI's controller calls): the
// broker identity files, the registration with a controller (get-next-id
// 1012 → apply-id 1013 → register 1003, then elect 1002 when the set has no
// master), heartbeats (904, to every controller) and the replica info poll
// (1004), the set of controller IPs a NOTIFY_BROKER_ROLE_CHANGED push is
// taken from, and the check of a push against the controller leader's
// answer (Confirm). It speaks to Apache's controller and to rocketgo's (controller/)
// alike: only the Remoting protocol is shared.
//
// Owns: <storePathRootDir>/brokerIdentity and brokerIdentity-temp; the
// controller leader address it last found.
// Never: serves controller requests (controller/ does); changes the store
// or the broker's role itself: callers act on the ReplicaState it returns.
//
// The broker drives it in controller mode (broker/role):
// the periodic heartbeat and poll, NOTIFY_BROKER_ROLE_CHANGED 1008, the
// role change and the name-server re-registration.
package replicas
