package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	jsoniter "github.com/json-iterator/go"

	"github.com/rocketgo/rocketgo/remoting"
)

// maxListFile bounds the file updateTopicList and updateSubGroupList read.
const maxListFile = 64 << 20

// The class defaults fastjson fills in for the fields a file leaves out
// (TopicConfig, SubscriptionGroupConfig).
var (
	topicDefaults = map[string]any{"readQueueNums": 16, "writeQueueNums": 16, "perm": 6, "topicFilterType": "SINGLE_TAG",
		"topicSysFlag": 0, "order": false, "attributes": map[string]string{}}
	groupDefaults = map[string]any{"consumeEnable": true, "consumeFromMinEnable": true, "consumeBroadcastEnable": true,
		"consumeMessageOrderly": false, "retryQueueNums": 1, "retryMaxTimes": 16, "groupRetryPolicy": map[string]string{"type": "CUSTOMIZED"},
		"brokerId": 0, "whichBrokerWhenConsumeSlowly": 1, "notifyConsumerIdsChangedEnable": true, "groupSysFlag": 0,
		"consumeTimeoutMinute": 15, "attributes": map[string]string{}}
)

// readConfigList reads a JSON array of objects from path, each completed
// with defaults; ok false (and the message printed) when there is no file.
func (a *admin) readConfigList(path string, defaults map[string]any) ([]map[string]any, bool, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(a.out, "the file path %s does not exists\n", path)
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxListFile+1))
	if err != nil {
		return nil, false, fmt.Errorf("%s: %w", path, err)
	}
	if len(b) > maxListFile {
		return nil, false, fmt.Errorf("%s: larger than %d bytes", path, maxListFile)
	}
	var items []map[string]jsoniter.RawMessage
	if err := json.Unmarshal(b, &items); err != nil {
		return nil, false, fmt.Errorf("%s: %w", path, err)
	}
	out := make([]map[string]any, 0, len(items))
	for _, it := range items {
		m := make(map[string]any, len(defaults)+len(it))
		for k, v := range defaults {
			m[k] = v
		}
		for k, v := range it {
			m[k] = v
		}
		out = append(out, m)
	}
	return out, true, nil
}

func updateTopicList(a *admin, o *options, args []string) error {
	return updateList(a, o, args, "create topic to which broker", "create topic to which cluster",
		"Path to a file with list of org.apache.rocketmq.common.TopicConfig in json format",
		topicDefaults, "topicConfigList", remoting.UpdateAndCreateTopicList, "topic config", "topic config")
}

func updateSubGroupList(a *admin, o *options, args []string) error {
	return updateList(a, o, args, "create groups to which broker", "create groups to which cluster",
		"Path to a file with a list of org.apache.rocketmq.remoting.protocol.subscription.SubscriptionGroupConfig in json format",
		groupDefaults, "groupConfigList", remoting.UpdateAndCreateSubscriptionGroupList, "group config", "subscription group config")
}

// updateList sends the file's configs in one request to -b, or to each
// master of -c (then, as Apache's, prints the usage too).
func updateList(a *admin, o *options, args []string, bDesc, cDesc, fDesc string, defaults map[string]any, field string,
	code int32, oneWhat, clusterWhat string) error {
	broker := o.String("b", "brokerAddr", bDesc)
	cluster := o.String("c", "clusterName", cDesc)
	o.Group(true, "b", "c")
	file := o.Req("f", "filename", fDesc)
	if err := a.parse(o, args); err != nil {
		return err
	}
	items, ok, err := a.readConfigList(strings.TrimSpace(*file), defaults)
	if err != nil || !ok || len(items) == 0 {
		return err
	}
	body, err := json.Marshal(map[string]any{field: items})
	if err != nil {
		return err
	}
	if o.Given("b") {
		addr := strings.TrimSpace(*broker)
		if _, err := a.Call(addr, code, nil, body); err != nil {
			return err
		}
		fmt.Fprintf(a.out, "submit batch of %s to %s success, please check the result later.\n", oneWhat, addr)
		return nil
	}
	bs, err := a.clusterBrokers(strings.TrimSpace(*cluster))
	if err != nil {
		return err
	}
	for _, addr := range addrsOf(bs, false) {
		if _, err := a.Call(addr, code, nil, body); err != nil {
			return err
		}
		fmt.Fprintf(a.out, "submit batch of %s to %s success, please check the result later.\n", clusterWhat, addr)
	}
	a.usage() // Apache falls through to it after -c
	return nil
}
