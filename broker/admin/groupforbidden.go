package admin

// The group forbidden table of Apache 5.x (SubscriptionGroupManager's
// forbiddenTable): per group and topic, bits of permissions taken away,
// set and read by UPDATE_AND_GET_GROUP_FORBIDDEN (353) and persisted in
// subscriptionGroup.json. A pull without its subscription (a push
// consumer's, the group known by heartbeat) of a topic whose read bit is
// taken away is refused NO_PERMISSION, as 5.3.3's PullMessageProcessor
// refuses it; a pull that brings its subscription is not checked, as in
// 5.3.3.

import (
	"errors"

	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
)

// UpdateGroupForbidden sets (readable false) or clears (true) the read
// bit of group on topic when readable is given, then reports it. As
// Apache, clearing the last bit of one topic drops the group's whole
// entry, and only a set bit bumps the data version.
func (s *Service) UpdateGroupForbidden(group, topic string, readable *bool) (tables.GroupForbidden, error) {
	if len(group) > message.GroupMaxLength || len(topic) > message.TopicMaxLength {
		return tables.GroupForbidden{}, remoting.Refuse(remoting.InvalidParameter, errors.New("admin: name too long"),
			"the group or topic name is too long")
	}
	return s.d.Groups.UpdateForbidden(group, topic, readable)
}
