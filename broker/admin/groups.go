package admin

import (
	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/remoting"
)

// UpdateGroup is UPDATE_AND_CREATE_SUBSCRIPTIONGROUP: the group rule
// (upstream's validateGroup; 5.3.3 takes any name) and retryQueueNums in
// [0, maxTopicQueueNums], refused INVALID_PARAMETER.
func (s *Service) UpdateGroup(gc tables.GroupConfig) error {
	if err := s.refuseOnSlave(); err != nil {
		return err
	}
	return s.d.Groups.Put(gc)
}

// DeleteGroup is DELETE_SUBSCRIPTIONGROUP: the group's config and, with
// cleanOffset, its committed offsets (Apache's removeOffset). Deleting a
// group that does not exist succeeds, as in Apache. A slave refuses
// (refuseOnSlave).
func (s *Service) DeleteGroup(group string, cleanOffset bool) error {
	if err := s.refuseOnSlave(); err != nil {
		return err
	}
	// A lite group's offsets (its lite topics') always go (Apache 5.5).
	if s.d.Groups.Contains(group) {
		if gc, ok := s.d.Groups.Get(group); ok && gc.LiteBindTopic() != "" {
			cleanOffset = true
		}
	}
	s.d.Groups.Delete(group)
	if cleanOffset {
		s.d.Offsets.DeleteGroup(group)
	}
	return nil
}

// GroupConfig is GET_SUBSCRIPTIONGROUP_CONFIG: the group's config, created
// as a lookup creates it (autoCreateSubscriptionGroup), else
// SUBSCRIPTION_GROUP_NOT_EXIST with Apache's remark. The result must not be
// modified.
func (s *Service) GroupConfig(group string) (*tables.GroupConfig, error) {
	gc, ok := s.d.Groups.Get(group)
	if !ok {
		return nil, remoting.Refuse(remoting.SubscriptionGroupNotExist, tables.ErrGroupNotExist, "No group in this broker")
	}
	return gc, nil
}

// AllGroupConfig is GET_ALL_SUBSCRIPTIONGROUP_CONFIG: a copy of the table.
func (s *Service) AllGroupConfig() tables.GroupTable { return s.d.Groups.Snapshot() }
