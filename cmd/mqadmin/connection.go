package main

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

func consumerConnection(a *admin, o *options, args []string) error {
	group := o.Req("g", "consumerGroup", "consumer group name")
	broker := o.String("b", "brokerAddr", "broker address")
	if err := a.parse(o, args); err != nil {
		return err
	}
	g := strings.TrimSpace(*group)
	if g == "" {
		return fmt.Errorf("-g consumer group is required")
	}
	cc, err := a.ConsumerConnection(g, strings.TrimSpace(*broker))
	if err != nil {
		return err
	}
	fmt.Fprintf(a.out, "%-36s %-22s %-10s %s\n", "#ClientId", "#ClientAddr", "#Language", "#Version")
	for _, c := range cc.ConnectionSet {
		fmt.Fprintf(a.out, "%-36s %-22s %-10s %s\n", c.ClientID, c.ClientAddr, c.Language, versionDesc(c.Version))
	}
	fmt.Fprintf(a.out, "\nBelow is subscription:\n")
	fmt.Fprintf(a.out, "%-20s %s\n", "#Topic", "#SubExpression")
	topics := make([]string, 0, len(cc.SubscriptionTable))
	for t := range cc.SubscriptionTable {
		topics = append(topics, t)
	}
	sort.Strings(topics) // Apache: the map's hash order
	for _, t := range topics {
		sd := cc.SubscriptionTable[t]
		fmt.Fprintf(a.out, "%-20s %s\n", sd.Topic, sd.SubString)
	}
	fmt.Fprintf(a.out, "\n")
	fmt.Fprintf(a.out, "ConsumeType: %s\n", cc.ConsumeType)
	fmt.Fprintf(a.out, "MessageModel: %s\n", cc.MessageModel)
	fmt.Fprintf(a.out, "ConsumeFromWhere: %s\n", cc.ConsumeFromWhere)
	return nil
}

func producerConnection(a *admin, o *options, args []string) error {
	group := o.Req("g", "producerGroup", "producer group name")
	topic := o.Req("t", "topic", "topic name")
	if err := a.parse(o, args); err != nil {
		return err
	}
	g := strings.TrimSpace(*group)
	if g == "" {
		return errors.New("-g producer group is required")
	}
	t, err := requireTopic(*topic)
	if err != nil {
		return err
	}
	conns, err := a.ProducerConnection(g, t)
	if err != nil {
		return err
	}
	for i, c := range conns { // Apache: a HashSet's order
		fmt.Fprintf(a.out, "%04d  %-32s %-22s %-8s %s\n", i+1, c.ClientID, c.ClientAddr, c.Language, versionDesc(c.Version))
	}
	return nil
}
