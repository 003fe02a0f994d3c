package broker

import (
	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/remoting"
)

// UpdateGroup is UPDATE_AND_CREATE_SUBSCRIPTIONGROUP: the group rule
// (upstream's validateGroup; 5.3.3 takes any name) and retryQueueNums in
// [0, maxTopicQueueNums], refused INVALID_PARAMETER.
func (b *Broker) UpdateGroup(gc tables.GroupConfig) error {
	if err := b.refuseOnSlave(); err != nil {
		return err
	}
	return b.Groups.Put(gc)
}

// DeleteGroup is DELETE_SUBSCRIPTIONGROUP: the group's config and, with
// cleanOffset, its committed offsets (Apache's removeOffset). Deleting a
// group that does not exist succeeds, as in Apache. A slave refuses
// (refuseOnSlave).
func (b *Broker) DeleteGroup(group string, cleanOffset bool) error {
	if err := b.refuseOnSlave(); err != nil {
		return err
	}
	b.Groups.Delete(group)
	if cleanOffset {
		b.Offsets.DeleteGroup(group)
	}
	return nil
}

// GroupConfig is GET_SUBSCRIPTIONGROUP_CONFIG: the group's config, created
// as a lookup creates it (autoCreateSubscriptionGroup), else
// SUBSCRIPTION_GROUP_NOT_EXIST with Apache's remark. The result must not be
// modified.
func (b *Broker) GroupConfig(group string) (*tables.GroupConfig, error) {
	gc, ok := b.Groups.Get(group)
	if !ok {
		return nil, remoting.Refuse(remoting.SubscriptionGroupNotExist, tables.ErrGroupNotExist, "No group in this broker")
	}
	return gc, nil
}

// AllGroupConfig is GET_ALL_SUBSCRIPTIONGROUP_CONFIG: a copy of the table.
func (b *Broker) AllGroupConfig() tables.GroupTable { return b.Groups.Snapshot() }
